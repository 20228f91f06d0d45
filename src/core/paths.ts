import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** State root: $MUSTER_HOME, else ${XDG_STATE_HOME:-~/.local/state}/muster. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  // A relative MUSTER_HOME is taken from the working directory, which may be gone (see workingDir).
  if (env.MUSTER_HOME) return path.resolve(workingDir(env), env.MUSTER_HOME);
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

/**
 * The process's working directory, also when it was deleted under us (process.cwd() then throws
 * ENOENT uv_cwd): Linux still names it in /proc/self/cwd, so callers can say which directory is gone
 * and go on when they do not need it.
 */
export function workingDir(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return process.cwd();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  try {
    const link = fs.readlinkSync("/proc/self/cwd").replace(/ \(deleted\)$/, "");
    if (path.isAbsolute(link)) return link;
  } catch {}
  if (env.PWD && path.isAbsolute(env.PWD)) return env.PWD;
  // No name left: a path that cannot exist, so every use says the directory is gone.
  return path.join(os.tmpdir(), ".muster-deleted-working-directory");
}

/** A working directory for a helper process that does not care where it runs: here, or / if here is gone. */
export function helperCwd(): string {
  const dir = workingDir();
  return fs.existsSync(dir) ? dir : path.parse(dir).root;
}
