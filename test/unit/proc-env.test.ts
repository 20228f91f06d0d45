import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { sessionLeadersWithEnv } from "../../src/util/proc.js";

const started: number[] = [];
afterEach(() => {
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

function sleeper(env: Record<string, string>, detached: boolean): number {
  const child = spawn("sleep", ["30"], {
    detached,
    stdio: "ignore",
    env: { PATH: process.env.PATH!, ...env },
  });
  child.unref();
  started.push(child.pid!);
  return child.pid!;
}

describe("sessionLeadersWithEnv", () => {
  it("finds the session leaders carrying exactly name=value, wherever it sits in their environment", () => {
    const dir = `/tmp/mt-proc-env-${process.pid}/artifacts/a`;
    const first = sleeper({ MUSTER_TEST_DIR: dir }, true);
    const later = sleeper({ A: "1", MUSTER_TEST_DIR: dir, Z: "2" }, true);
    // Not a session leader (the runner of a turn always is), a longer value, another name with the same text.
    sleeper({ MUSTER_TEST_DIR: dir }, false);
    sleeper({ MUSTER_TEST_DIR: `${dir}2` }, true);
    sleeper({ X_MUSTER_TEST_DIR: dir }, true);
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", dir).sort()).toEqual([first, later].sort());
  });

  it("finds nothing for a value no process carries", () => {
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", `/nowhere/${process.pid}`)).toEqual([]);
  });
});
