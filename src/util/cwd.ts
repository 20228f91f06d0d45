import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

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
