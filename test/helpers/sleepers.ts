import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { afterEach } from "vitest";

/**
 * `sleep 30` processes a test starts (detached: a session of its own), each SIGKILLed after the test. Call at a
 * test file's top level.
 */
export function useSleepers(): (opts?: { detached?: boolean; env?: Record<string, string> }) => number {
  const started: number[] = [];
  afterEach(() => {
    for (const pid of started.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
  });
  return ({ detached = false, env } = {}) => {
    const child = spawn("sleep", ["30"], {
      detached,
      stdio: "ignore",
      ...(env ? { env: { PATH: process.env.PATH!, ...env } } : {}),
    });
    child.unref();
    started.push(child.pid!);
    return child.pid!;
  };
}

/** The nice of the scheduling group (Linux's autogroups) of the session `pid` is in ("self": this process's). */
export function autogroupNice(pid: number | "self"): number {
  return Number(fs.readFileSync(`/proc/${pid}/autogroup`, "latin1").trim().split(" nice ")[1]);
}
