/** Runs git (argv only, never a shell) for worktree isolation; every call names its directory with -C. */
import { spawnSync } from "node:child_process";
import { MusterError } from "../base/errors.js";

export interface GitRun {
  ok: boolean;
  status: number | null;
  stdout: string;
  stderr: string;
}

const MAX_BUFFER = 64 * 1024 * 1024;
// A git call that runs past this (a hook that hangs, a lock it waits on) is killed and reported.
const GIT_TIMEOUT_MS = 5 * 60_000;

// A commit muster makes (a child's leftovers, a merge) needs an identity; one the user configured wins.
const FALLBACK_IDENTITY = ["-c", "user.name=muster", "-c", "user.email=muster@localhost"];

/** Runs `git -C dir args…`; never throws on a non-zero exit (see `git`). */
export function runGit(
  dir: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {},
): GitRun {
  const timeout = opts.timeoutMs ?? GIT_TIMEOUT_MS;
  const r = spawnSync("git", ["-C", dir, ...args], {
    encoding: "utf8",
    maxBuffer: MAX_BUFFER,
    // spawnSync kills git and closes its pipes at the timeout, even when a process git started holds them.
    timeout,
    killSignal: "SIGKILL",
    env: { ...process.env, ...opts.env, GIT_TERMINAL_PROMPT: "0" },
    ...(opts.input !== undefined ? { input: opts.input } : { stdio: ["ignore", "pipe", "pipe"] }),
  });
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === "ETIMEDOUT")
    throw new MusterError("unsupported", `git ${args[0]} in ${dir} timed out after ${timeout / 1000} s`, {
      cause: r.error,
    });
  if (r.error) {
    const why =
      (r.error as NodeJS.ErrnoException).code === "ENOENT" ? "git is not installed" : r.error.message;
    throw new MusterError("unsupported", `cannot run git: ${why}`, { cause: r.error });
  }
  return { ok: r.status === 0, status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/** Runs git and returns its stdout; a non-zero exit is an error quoting git's first line. */
export function git(dir: string, args: string[], opts: { env?: NodeJS.ProcessEnv } = {}): string {
  const r = runGit(dir, args, opts);
  if (!r.ok) throw gitFailure(args, r);
  return r.stdout;
}

export function gitFailure(args: string[], r: GitRun): MusterError {
  const said = (r.stderr || r.stdout).trim().split("\n")[0]?.slice(0, 300) || `exit ${r.status}`;
  return new MusterError("invalid_argument", `git ${args[0]} failed: ${said}`);
}

/** `-c user.name/email` when the repository has no identity of its own, else nothing. */
export function identityArgs(dir: string): string[] {
  return runGit(dir, ["config", "--get", "user.email"]).stdout.trim() ? [] : FALLBACK_IDENTITY;
}

/** NUL-separated output → its non-empty fields. */
export const zsplit = (s: string): string[] => s.split("\0").filter((x) => x !== "");
