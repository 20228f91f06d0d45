import { describe, expect, it } from "vitest";
import { importWithEnv, interactiveEnv } from "../../src/util/terminal-env.js";

describe("terminal env", () => {
  it("interactiveEnv drops the CI markers and keeps everything else", () => {
    expect(
      interactiveEnv({ CI: "true", CONTINUOUS_INTEGRATION: "1", CI_JOB_ID: "7", PATH: "/bin", CIRCLE: "x" }),
    ).toEqual({
      PATH: "/bin",
      CIRCLE: "x",
    });
  });

  it("importWithEnv loads with the markers hidden and the changes applied, then puts the environment back", async () => {
    const ci = process.env.CI;
    process.env.CI = "true";
    delete process.env.MUSTER_TEST_ENV_X;
    try {
      const seen = await importWithEnv(
        async () => ({ ci: process.env.CI, x: process.env.MUSTER_TEST_ENV_X }),
        {
          MUSTER_TEST_ENV_X: "set",
        },
      );
      expect(seen).toEqual({ ci: undefined, x: "set" });
      expect(process.env.CI).toBe("true");
      expect("MUSTER_TEST_ENV_X" in process.env).toBe(false);
    } finally {
      if (ci === undefined) delete process.env.CI;
      else process.env.CI = ci;
    }
  });
});
