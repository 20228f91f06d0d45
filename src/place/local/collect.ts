import type { ChildProcess } from "node:child_process";
import { ExecFailure, type ExecRun } from "../place.js";

// After the call's own process exits, how long its pipes may stay open (a process it forked can hold them).
const DRAIN_AFTER_EXIT_MS = 1000;

/**
 * Gathers a spawned command (stdout and stderr piped) to its end: resolves on any exit code, rejects with an
 * ExecFailure `start` when it could not run and `timeout` after `timeoutMs` (it is killed then).
 * Neither waits on a pipe that a forked process keeps open: the call ends when its own process does (plus a
 * short drain), and a timeout ends it at once.
 */
export function collectRun(child: ChildProcess, timeoutMs: number): Promise<ExecRun> {
  return new Promise<ExecRun>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let settled = false;
    let drain: NodeJS.Timeout | undefined;
    const finish = (): void => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(drain);
      child.stdout!.destroy();
      child.stderr!.destroy();
    };
    const timer = setTimeout(() => {
      if (settled) return;
      finish();
      child.kill("SIGKILL");
      reject(new ExecFailure("timeout", `timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    const done = (code: number | null): void => {
      if (settled) return;
      finish();
      resolve({
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        exitCode: code ?? 1,
      });
    };
    child.stdout!.on("data", (b: Buffer) => out.push(b));
    child.stderr!.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e: NodeJS.ErrnoException) => {
      if (settled) return;
      finish();
      reject(new ExecFailure("start", e.message, e));
    });
    child.on("exit", (code) => {
      // The timer may fire late, in a loop iteration that has not read the pipes yet (a process kept busy
      // with synchronous work for over the drain): setImmediate runs after that iteration's poll, which
      // takes in what is already waiting there (tmux's pane id, printed just before it exited).
      drain = setTimeout(() => setImmediate(() => done(code)), DRAIN_AFTER_EXIT_MS);
    });
    child.on("close", (code) => done(code));
  });
}
