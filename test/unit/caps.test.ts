import { describe, expect, it } from "vitest";
import { capSpent, capsProblem, narrowCaps, remainingCaps, usageOfEvents } from "../../src/artifacts/caps.js";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { durationMs } from "../../src/util/duration.js";

const T1 = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e6f";
const T2 = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e70";
let seq = 0;
const ev = (e: Record<string, unknown>, ts = "2026-01-01T00:00:01.000Z") =>
  ({ v: 1, eventId: `e${++seq}`, seq, ts, ...e }) as unknown as MusterEvent;

describe("caps (pure parts)", () => {
  it("narrowCaps keeps the tighter of each cap and every cap either side sets", () => {
    expect(narrowCaps({ maxTimeMs: 5000, maxTokens: 10 }, { maxTimeMs: 2000, maxCost: 1 })).toEqual({
      maxTimeMs: 2000,
      maxTokens: 10,
      maxCost: 1,
    });
    expect(narrowCaps(undefined, undefined)).toEqual({});
  });

  it("usageOfEvents counts turns that ran or are open, tool starts, tokens and cost since a time", () => {
    const events = [
      ev({ type: "turn_started", turnId: T1 }, "2026-01-01T00:00:00.000Z"),
      ev({ type: "runner_started", turnId: T1 }),
      ev({ type: "tool_activity", turnId: T1, phase: "start", name: "a", summary: "" }),
      ev({ type: "tool_activity", turnId: T1, phase: "end", name: "a", summary: "" }),
      ev({ type: "usage", turnId: T1, usage: { input: 3, output: 4, cost: 0.5 } }),
      ev({ type: "completion", turnId: T1, status: "completed", by: "child" }),
      // Refused at its start: it never ran, it used nothing.
      ev({ type: "turn_started", turnId: T2 }),
      ev({ type: "completion", turnId: T2, status: "exhausted", by: "child" }),
    ];
    expect(usageOfEvents(events)).toEqual({ turns: 1, toolCalls: 1, tokens: 7, cost: 0.5 });
    expect(usageOfEvents(events, "2026-01-01T00:00:00.500Z")).toEqual({
      turns: 0,
      toolCalls: 1,
      tokens: 7,
      cost: 0.5,
    });
  });

  it("capSpent names the first spent cap and its scope; remainingCaps is what a child may still use", () => {
    const used = { turns: 2, toolCalls: 3, tokens: 100, cost: 0.25 };
    expect(capSpent({ maxToolCalls: 3 }, used, "the tree")).toBe(
      "cap reached: max-tool-calls 3 (the tree used 3)",
    );
    expect(capSpent({ maxToolCalls: 4, maxTokens: 1000 }, used, "x")).toBeUndefined();
    expect(
      remainingCaps({ maxTimeMs: 10_000, maxTokens: 150, maxTurns: 2, idleTimeoutMs: 5 }, used, 4000),
    ).toEqual({ maxTimeMs: 6000, maxTokens: 50, maxTurns: 0, idleTimeoutMs: 5 });
  });

  it("durationMs reads seconds and unit suffixes; capsProblem refuses unknown or non-positive caps", () => {
    expect([durationMs(2), durationMs("250ms"), durationMs("1.5m"), durationMs("x"), durationMs(0)]).toEqual([
      2000,
      250,
      90_000,
      undefined,
      undefined,
    ]);
    expect(capsProblem({ maxTurns: 2 })).toBeUndefined();
    expect(capsProblem({ maxTurnz: 2 })).toContain("unknown cap");
    expect(capsProblem({ maxCost: 0 })).toContain("positive");
    expect(capsProblem([])).toContain("object");
  });
});
