import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { afterEach } from "vitest";

/**
 * `sleep 30` processes a test starts (detached: a session of its own; `argv0`: what its command line starts
 * with), each SIGKILLed after the test. Call at a test file's top level.
 */
export function useSleepers(): (opts?: {
  detached?: boolean;
  env?: Record<string, string>;
  argv0?: string;
}) => number {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  });
  return ({ detached = false, env, argv0 } = {}) => {
    const child = spawn("sleep", ["30"], {
      detached,
      ...(argv0 ? { argv0 } : {}),
      stdio: "ignore",
      ...(env ? { env: { PATH: process.env.PATH!, ...env } } : {}),
    });
    child.unref();
    started.push(child.pid!);
    return child.pid!;
  };
}

/**
 * What Linux says of the scheduling group (autogroup) of the session `pid` is in ("self": this process's): e.g.
 * "/autogroup-42 nice 0", or "" for a session still in the root group (init's, where CI's harness may run).
 */
export function autogroupOf(pid: number | "self"): string {
  return fs.readFileSync(`/proc/${pid}/autogroup`, "latin1").trim();
}

/** The nice of the autogroup of the session `pid` is in: NaN where that is the root group. */
export function autogroupNice(pid: number | "self"): number {
  return Number(autogroupOf(pid).split(" nice ")[1]);
}
