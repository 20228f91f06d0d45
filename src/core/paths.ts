import * as os from "node:os";
import * as path from "node:path";

/** State root: $MUSTER_HOME, else ${XDG_STATE_HOME:-~/.local/state}/muster. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  if (env.MUSTER_HOME) return path.resolve(env.MUSTER_HOME);
  const state = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), ".local", "state");
  return path.join(state, "muster");
}

/** Paths of one primary's state (DESIGN.md §3). */
export function primaryPaths(root: string, primary: string) {
  const dir = path.join(root, "primaries", primary);
  return {
    dir,
    registry: path.join(dir, "registry.json"),
    /** Consumed delivery records (append + fsync). */
    receipts: path.join(dir, "receipts.ndjson"),
    groups: path.join(dir, "groups"),
    artifacts: path.join(dir, "artifacts"),
    artifactDir: (child: string) => path.join(dir, "artifacts", child),
  };
}

export type PrimaryPaths = ReturnType<typeof primaryPaths>;
