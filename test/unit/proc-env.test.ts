import { describe, expect, it } from "vitest";
import { sessionLeadersWithEnv } from "../../src/util/proc.js";
import { useSleepers } from "../helpers/sleepers.js";

const sleeper = useSleepers();

describe("sessionLeadersWithEnv", () => {
  it("finds the session leaders carrying exactly name=value, wherever it sits in their environment", () => {
    const dir = `/tmp/mt-proc-env-${process.pid}/artifacts/a`;
    const first = sleeper({ env: { MUSTER_TEST_DIR: dir }, detached: true });
    const later = sleeper({ env: { A: "1", MUSTER_TEST_DIR: dir, Z: "2" }, detached: true });
    // Not a session leader (the runner of a turn always is), a longer value, another name with the same text.
    sleeper({ env: { MUSTER_TEST_DIR: dir } });
    sleeper({ env: { MUSTER_TEST_DIR: `${dir}2` }, detached: true });
    sleeper({ env: { X_MUSTER_TEST_DIR: dir }, detached: true });
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", dir).sort()).toEqual([first, later].sort());
  });

  it("finds nothing for a value no process carries", () => {
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", `/nowhere/${process.pid}`)).toEqual([]);
  });
});
