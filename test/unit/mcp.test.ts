import { describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { CallProgress, type ProgressParams } from "../../src/mcp/progress.js";
import { AGENT_LIST_BUDGET, agentsLine, oneLine } from "../../src/mcp/shape.js";
import { listedTool, toolTable } from "../../src/mcp/tools.js";
import { tempBase, world } from "./profile-world.js";

const base = tempBase("mcp-unit-");

describe("the MCP tool list stays compact", () => {
  it("cuts a description to its first sentence without parentheticals, at most 60 characters", () => {
    expect(oneLine("Demo child that explores (mock runner, ~3 s). More text.")).toBe(
      "Demo child that explores",
    );
    expect(oneLine("Runs any argv after `--` (see\n muster spawn); stdout is the answer.")).toBe(
      "Runs any argv after `--`; stdout is the answer",
    );
    const long = oneLine("x".repeat(200));
    expect(long).toHaveLength(60);
    expect(long.endsWith("…")).toBe(true);
  });

  it("lists every profile while they fit, then counts the rest; the whole list stays under 6,000 characters", () => {
    const w = world(base);
    for (let i = 0; i < 300; i++)
      w.project(
        `a${String(i).padStart(3, "0")}.md`,
        `---\ndescription: ${"Agent number ".repeat(9)}${i}\n---\nx\n`,
      );
    const line = agentsLine(w.discover(false));
    expect(line.length).toBeLessThanOrEqual(AGENT_LIST_BUDGET);
    expect(line).toContain("a000: Agent number");
    expect(line).toMatch(/\n\+\d+ more \(the subagents_agents tool lists all\)$/);
    const shown = line.split("\n").length - 2;
    const more = Number(/\+(\d+) more/.exec(line)![1]);
    expect(shown + more).toBe(w.discover(false).profiles.length);
    const tools = toolTable(line).map(listedTool);
    expect(JSON.stringify({ tools }).length).toBeLessThan(6600);
  });
});

describe("progress of a waiting call", () => {
  const ev = (e: Record<string, unknown>): MusterEvent =>
    ({ v: 1, eventId: "e", seq: 1, ts: new Date().toISOString(), ...e }) as unknown as MusterEvent;

  it("reports only new activity, in order with a rising counter, repeats itself while quiet, and stops", async () => {
    const sent: ProgressParams[] = [];
    const p = new CallProgress("tok", async (x) => void sent.push(x), 40);
    const id = "01a2291f-6c9f-7000-bc8a-2f5ea6002fbe";
    // History (events from before the call) is folded in but not reported.
    const old = { ts: "2000-01-01T00:00:00.000Z" };
    p.event(
      id,
      ev({ type: "tool_activity", turnId: "t0", phase: "start", name: "old", summary: "", ...old }),
    );
    p.event(
      id,
      ev({
        type: "turn_started",
        turnId: "t",
        source: "inbox",
        promptBytes: 5,
        promptSha256: "",
        promptPath: "",
      }),
    );
    p.event(id, ev({ type: "tool_activity", turnId: "t", phase: "start", name: "grep", summary: "todo" }));
    await new Promise((r) => setTimeout(r, 110));
    p.event(id, ev({ type: "completion", turnId: "t", status: "completed", by: "child" }));
    await p.stop();
    const n = sent.length;
    await new Promise((r) => setTimeout(r, 100));
    expect(sent.length).toBe(n);
    expect(sent.map((s) => s.progress)).toEqual(sent.map((_, i) => i + 1));
    expect(sent[0]!.message).toBe("a6002fbe running · turn started (5 bytes)");
    expect(sent[1]!.message).toBe("a6002fbe running · ⚙ grep todo");
    expect(sent.slice(2, -1).length).toBeGreaterThanOrEqual(1); // heartbeats
    for (const s of sent.slice(2, -1)) expect(s.message).toBe("a6002fbe running · ⚙ grep todo");
    expect(sent.at(-1)!.message).toBe("a6002fbe completed");
  });

  it("sends nothing without a progress token", async () => {
    const sent: ProgressParams[] = [];
    const p = new CallProgress(undefined, async (x) => void sent.push(x), 10);
    p.say("hello");
    await new Promise((r) => setTimeout(r, 30));
    await p.stop();
    expect(sent).toEqual([]);
  });
});
