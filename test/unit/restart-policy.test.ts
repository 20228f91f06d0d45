import { describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { parseRestart, restartBackoffMs } from "../../src/artifacts/restart.js";
import { replayPrompt } from "../../src/core/restart.js";
import { applyEvents, emptyState, openTurn } from "../../src/core/state.js";
import type { ChildView } from "../../src/core/views.js";
import { parseProfile } from "../../src/profiles/parse.js";
import { childRow } from "../../src/tui/view.js";
import { parseWorkflow } from "../../src/workflows/dag/toml.js";

const TURN = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e6f";

describe("restart policy", () => {
  it("reads no, on-lost and on-lost:N (1..20); anything else is undefined", () => {
    expect(parseRestart("no")).toBeNull();
    expect(parseRestart("on-lost")).toEqual({ onLost: 3 });
    expect(parseRestart(" on-lost:1 ")).toEqual({ onLost: 1 });
    expect(parseRestart("on-lost:20")).toEqual({ onLost: 20 });
    for (const bad of [
      "",
      "yes",
      "on-lost:0",
      "on-lost:21",
      "on-lost:",
      "on-lost:-1",
      "on-lost:1.5",
      "ON-LOST",
    ])
      expect(parseRestart(bad)).toBeUndefined();
  });

  it("backs off 1 s, 2 s, 4 s, 8 s, then 10 s", () => {
    expect([1, 2, 3, 4, 5, 20].map(restartBackoffMs)).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000]);
  });

  it("a replayed prompt carries one note, the newest, ahead of the task", () => {
    const once = replayPrompt("do the thing", "child host (pid 7) is gone", 1, 3);
    expect(once).toBe(
      "muster restarted you after your process died (child host (pid 7) is gone; restart 1 of 3); continue the task:\n\ndo the thing",
    );
    const twice = replayPrompt(once, "child host (pid 8) is gone\nwith a second line", 2, 3);
    expect(twice).toBe(
      "muster restarted you after your process died (child host (pid 8) is gone with a second line; restart 2 of 3); continue the task:\n\ndo the thing",
    );
  });

  it("a profile's restart: is read, and a bad one is a warning", () => {
    expect(parseProfile("a.md", "---\nrestart: on-lost:2\n---\n").restart).toEqual({ onLost: 2 });
    expect(parseProfile("a.md", "---\nrestart: no\n---\n").restart).toBeUndefined();
    const bad = parseProfile("a.md", "---\nrestart: 5\n---\n");
    expect(bad.restart).toBeUndefined();
    expect(bad.warnings.join("\n")).toMatch(/restart.*must be "no" or "on-lost\[:N\]"/);
  });

  it("a workflow step's restart is checked when the workflow is read", () => {
    const step = (v: string) =>
      `name = "w"\n[[steps]]\nid = "a"\nagent = "mock"\nprompt = "p"\nrestart = ${JSON.stringify(v)}\n`;
    expect(parseWorkflow(step("on-lost:2"), "w.toml").steps[0]!.restart).toBe("on-lost:2");
    expect(() => parseWorkflow(step("often"), "w.toml")).toThrow(
      /step "a": "restart" must be "no" or "on-lost\[:N\]"/,
    );
  });
});

describe("a restarted turn in the state fold", () => {
  let seq = 0;
  const ev = (e: Record<string, unknown>): MusterEvent =>
    ({ v: 1, eventId: `e${++seq}`, seq, ts: `2026-01-01T00:00:0${seq % 10}.000Z`, ...e }) as MusterEvent;
  const started = (by: "spawn" | "resume", pid: number) =>
    ev({ type: "child_started", pid, runner: "mock", by });
  const turn = () =>
    ev({
      type: "turn_started",
      turnId: TURN,
      source: "inbox",
      promptBytes: 3,
      promptSha256: "x",
      promptPath: "p",
    });

  it("is one turn: started again under its id, with its restarts, and settled by the new host", () => {
    const s = applyEvents(emptyState(), [
      started("spawn", 10),
      turn(),
      ev({ type: "runner_started", turnId: TURN, pid: 11, argv0: "node" }),
      ev({ type: "restarted", turnId: TURN, reason: "gone", attempt: 1, max: 2, by: "parent" }),
      started("resume", 20),
      turn(),
    ]);
    expect(s.turns).toHaveLength(1);
    expect(s.turns[0]).toMatchObject({
      n: 1,
      restarts: [expect.objectContaining({ attempt: 1, reason: "gone" })],
    });
    expect(s.turns[0]!.runnerPid).toBeUndefined();
    expect(openTurn(s)?.turnId).toBe(TURN);
    applyEvents(s, [ev({ type: "completion", turnId: TURN, status: "completed", by: "child" })]);
    expect(openTurn(s)).toBeUndefined();
    expect(s.hostPid).toBe(20);
  });
});

describe("top's row of a restarted child", () => {
  it("marks the newest turn's restarts beside the state", () => {
    const view = (restarts: number) =>
      ({
        id: "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e6f",
        parent: null,
        agent: "mock",
        placed: false,
        place: "local",
        status: "running",
        live: { state: "working", since: "2026-01-01T00:00:00.000Z" },
        turns: [
          {
            status: "running",
            startedAt: "2026-01-01T00:00:00.000Z",
            ...(restarts > 0
              ? { restarts: Array.from({ length: restarts }, (_, i) => ({ attempt: i + 1 })) }
              : {}),
          },
        ],
        model: null,
        usage: null,
        lastActivity: null,
        createdAt: "2026-01-01T00:00:00.000Z",
      }) as unknown as ChildView;
    expect(childRow(view(0))).toMatchObject({ state: "working", restarts: 0 });
    expect(childRow(view(2))).toMatchObject({ state: "working ↻2", restarts: 2 });
  });
});
