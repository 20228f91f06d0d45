import { describe, expect, it } from "vitest";
import { capsProblem } from "../../src/artifacts/caps.js";
import { MAX_TIMER_MS } from "../../src/util/timer-limit.js";

describe("durations that become timers", () => {
  it("stay under setTimeout's limit (2^31 - 1 ms), past which a timer fires at once", () => {
    expect(MAX_TIMER_MS).toBeLessThanOrEqual(2 ** 31 - 1);
  });

  it("caps given by a caller (MCP) over the limit are refused, naming it", () => {
    expect(capsProblem({ maxTimeMs: MAX_TIMER_MS })).toBeUndefined();
    expect(capsProblem({ maxTimeMs: 30 * 86_400_000 })).toContain("cap maxTimeMs must be at most 24d");
    expect(capsProblem({ idleTimeoutMs: MAX_TIMER_MS + 1 })).toContain(
      "cap idleTimeoutMs must be at most 24d",
    );
    // Counts are not timers: any positive number is fine.
    expect(capsProblem({ maxTokens: 1e12 })).toBeUndefined();
  });
});
