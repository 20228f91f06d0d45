import type { ChildProcess } from "node:child_process";
import type { MusterError } from "../base/errors.js";

/** What one call of a multiplexer's CLI printed, and how it exited. */
export interface MuxRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/**
 * Gathers a spawned multiplexer call (stdout and stderr piped) to its end: resolves on any exit code, rejects
 * with `failed.start` when it could not run and with `failed.timeout` after `timeoutMs` (it is killed then).
 */
export function collectRun(
  child: ChildProcess,
  timeoutMs: number,
  failed: { start(e: NodeJS.ErrnoException): MusterError; timeout(): MusterError },
): Promise<MuxRun> {
  return new Promise<MuxRun>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.stdout!.on("data", (b: Buffer) => out.push(b));
    child.stderr!.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(failed.start(e));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) return reject(failed.timeout());
      resolve({
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        exitCode: code ?? 1,
      });
    });
  });
}
