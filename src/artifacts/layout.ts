import * as path from "node:path";

/** File names inside one child's artifact dir (spec: artifacts/README.md). */
export function childFiles(dir: string) {
  return {
    dir,
    meta: path.join(dir, "meta.json"),
    events: path.join(dir, "events.ndjson"),
    output: path.join(dir, "output.md"),
    outputs: path.join(dir, "outputs"),
    inbox: path.join(dir, "inbox"),
    prompts: path.join(dir, "prompts"),
    control: path.join(dir, "control"),
    /** Private files an agent CLI needs for this child (settings, its own session files); never the user's. */
    runner: path.join(dir, "runner"),
    /** The spawning environment, handed over once: the child host deletes it on read. */
    envFile: path.join(dir, "env.json"),
    /** Present while a parent is cancelling the child: its host starts no turn from then on. */
    closing: path.join(dir, "closing"),
  };
}

export type ChildFiles = ReturnType<typeof childFiles>;

export const promptFile = (dir: string, turnId: string): string => path.join(dir, "prompts", `${turnId}.txt`);
