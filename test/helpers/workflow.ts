import { execa, type ResultPromise } from "execa";
import { BIN, type Sandbox, until } from "./cli.js";

/** `muster workflow run <file> [--json]` in the background, as a person would start it in a shell. */
export function runInBackground(sb: Sandbox, file: string, json = false): ResultPromise {
  return execa(process.execPath, [BIN, "workflow", "run", file, ...(json ? ["--json"] : [])], {
    cwd: sb.cwd,
    env: sb.env,
    extendEnv: false,
    reject: false,
    stdin: "ignore",
  });
}

/** The run of the named workflow (from `workflow runs`) once its step at `index` is running. */
// biome-ignore lint/suspicious/noExplicitAny: the run as `workflow runs --json` shows it
export function whenStepRunning(sb: Sandbox, workflow: string, index = 0): Promise<any> {
  let last: unknown;
  // Generous: each probe is a CLI call, and on a loaded machine the steps before `index` take a while.
  return until(async () => {
    const runs = (await sb.json(["workflow", "runs"])).data.runs;
    const r = runs.find((x: { workflow: string }) => x.workflow === workflow);
    last = r;
    return r?.steps[index]?.status === "running" ? r : undefined;
  }, 45_000).catch((e: Error) => {
    throw new Error(
      `${e.message}: step ${index} of ${workflow} not running; last seen ${JSON.stringify(last)}`,
    );
  });
}
