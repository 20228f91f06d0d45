import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { liveOf } from "../../src/core/children.js";
import { stallMsFrom } from "../../src/core/live-state.js";
import { applyEvents, childStatus, emptyState } from "../../src/core/state.js";

const T = "01900000-0000-7000-8000-0000000000aa";
const T2 = "01900000-0000-7000-8000-0000000000bb";
const t0 = Date.parse("2026-01-01T00:00:00.000Z");
const at = (s: number): string => new Date(t0 + s * 1000).toISOString();

let seq = 0;
/** One event at second `s` (the fields the fold reads; the log fills the rest in real files). */
function ev(s: number, e: Record<string, unknown>): MusterEvent {
  seq += 1;
  return { v: 1, eventId: `e${seq}`, seq, ts: at(s), ...e } as unknown as MusterEvent;
}

const started = (s = 0) => ev(s, { type: "child_started", pid: 42, runner: "mock", by: "spawn" });
const turn = (s: number, turnId = T) =>
  ev(s, { type: "turn_started", turnId, source: "inbox", promptBytes: 3, promptSha256: "", promptPath: "p" });
const tool = (s: number, phase: "start" | "end", name = "bash", summary = "ls -la") =>
  ev(s, { type: "tool_activity", turnId: T, phase, name, summary });
const done = (s: number, status = "completed", turnId = T) =>
  ev(s, { type: "completion", turnId, status, by: "child" });
const perm = (s: number, state: string, t = "Bash") =>
  ev(s, { type: "permission", turnId: T, state, tool: t });

/** The live state after these events, `nowS` seconds after t0, with a 60 s stall limit. */
function live(events: MusterEvent[], nowS: number, pending = 0) {
  const s = applyEvents(emptyState(), events);
  return liveOf(s, pending, { now: t0 + nowS * 1000, stallMs: 60_000, createdAt: at(0) });
}

describe("live state from events", () => {
  it("a command child's open turn runs its command, not a model call", () => {
    const cmd = ev(0, { type: "child_started", pid: 42, runner: "command", by: "spawn" });
    expect(live([cmd, turn(1)], 2)).toMatchObject({ state: "working", detail: "running its command" });
    expect(live([started(), turn(1)], 2)).toMatchObject({ state: "working", detail: "model call" });
  });

  it("starting before the host wrote child_started", () => {
    expect(live([], 5)).toEqual({ state: "starting", since: at(0) });
  });

  it("working while a turn is open: the tool running, else the model call", () => {
    expect(live([started(), turn(1)], 2)).toEqual({ state: "working", since: at(1), detail: "model call" });
    expect(live([started(), turn(1), tool(2, "start")], 3)).toEqual({
      state: "working",
      since: at(1),
      detail: "bash ls -la",
    });
    expect(live([started(), turn(1), tool(2, "start"), tool(3, "end")], 4).detail).toBe("model call");
  });

  it("waiting-input once the turn settled, saying how it ended", () => {
    expect(live([started(), turn(1), done(9, "errored")], 20)).toEqual({
      state: "waiting-input",
      since: at(9),
      detail: "last turn errored",
    });
    expect(live([started()], 20)).toEqual({ state: "waiting-input", since: at(0) });
  });

  it("waiting-input while a question to the parent is open (muster ask), never stalled; working again once answered", () => {
    const R = "01900000-0000-7000-8000-0000000000cc";
    const q = ev(2, { type: "question", turnId: T, requestId: R, text: "Which branch?" });
    expect(live([started(), turn(1), q], 500)).toEqual({
      state: "waiting-input",
      since: at(2),
      detail: "asks: Which branch?",
    });
    const a = ev(30, { type: "answered", turnId: T, requestId: R, outcome: "answered", text: "dev" });
    expect(live([started(), turn(1), q, a], 31)).toMatchObject({ state: "working" });
  });

  it("queued while waiting for a run slot", () => {
    const q = ev(1, { type: "turn_queued", turnId: T, running: 4, limit: 4 });
    expect(live([started(), q], 5, 1)).toEqual({
      state: "queued",
      since: at(1),
      detail: "waiting for a run slot (4 of 4 busy)",
    });
    expect(live([started(), q, turn(7)], 8).state).toBe("working");
  });

  it("stalled when an open turn has had no event for the stall limit", () => {
    const evs = [started(), turn(1), tool(10, "start")];
    expect(live(evs, 69).state).toBe("working");
    expect(live(evs, 70)).toEqual({ state: "stalled", since: at(70), detail: "no event for 60s (in bash)" });
    // The next event ends the stall.
    expect(live([...evs, tool(100, "end")], 101).state).toBe("working");
  });

  it("waiting-permission while a permission is pending; idle after a turn that had one refused, with the hint", () => {
    expect(live([started(), turn(1), perm(2, "pending")], 3)).toEqual({
      state: "waiting-permission",
      since: at(2),
      detail: "asks permission for Bash",
    });
    expect(live([started(), turn(1), perm(2, "pending"), perm(4, "granted")], 5).state).toBe("working");
    // A refusal mid-turn: the turn goes on; once it settles nothing waits on a permission, the hint stays.
    const refused = [started(), turn(1), perm(2, "denied"), perm(3, "denied", "WebFetch")];
    expect(live(refused, 4).state).toBe("working");
    expect(live([...refused, done(5)], 6)).toEqual({
      state: "waiting-input",
      since: at(5),
      detail:
        "last turn completed; permission refused for Bash, WebFetch: allow it in the profile's tools, then resume",
    });
    // The next turn clears it.
    expect(live([...refused, done(5), turn(7, T2)], 8).state).toBe("working");
  });

  it("settled outcomes once the host exited", () => {
    const exited = (reason: string) =>
      ev(20, { type: "child_exited", reason, by: "child", detail: `host ${reason}` });
    const base = [started(), turn(1), done(9)];
    expect(live([...base, exited("closed")], 30)).toEqual({
      state: "closed",
      since: at(20),
      detail: "host closed",
    });
    expect(live([...base, exited("cancelled")], 30).state).toBe("cancelled");
    expect(live([...base, exited("lost")], 30).state).toBe("lost");
    expect(live([started(), exited("closed")], 30).state).toBe("closed");
  });

  it("agrees with the lifecycle status for any event order (property)", () => {
    const kinds = fc.constantFrom(
      "started",
      "turn",
      "tool-start",
      "tool-end",
      "perm-pending",
      "perm-denied",
      "done",
      "exited",
      "queued",
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(kinds, fc.nat(200)), { maxLength: 30 }), fc.nat(400), (steps, nowS) => {
        let s = 0;
        const evs = steps.map(([k, gap]) => {
          s += gap;
          switch (k) {
            case "started":
              return started(s);
            case "turn":
              return turn(s);
            case "tool-start":
              return tool(s, "start");
            case "tool-end":
              return tool(s, "end");
            case "perm-pending":
              return perm(s, "pending");
            case "perm-denied":
              return perm(s, "denied");
            case "done":
              return done(s);
            case "queued":
              return ev(s, { type: "turn_queued", turnId: T, running: 1, limit: 1 });
            default:
              return ev(s, { type: "child_exited", reason: "closed", by: "child" });
          }
        });
        const state = applyEvents(emptyState(), evs);
        const status = childStatus(state, 0);
        const l = liveOf(state, 0, { now: t0 + (s + nowS) * 1000, stallMs: 60_000, createdAt: at(0) });
        if (status === "running") expect(["working", "stalled", "waiting-permission"]).toContain(l.state);
        else if (status === "starting") expect(l.state).toBe("starting");
        else if (status === "closed") expect(["completed", "closed"]).toContain(l.state);
        else expect(["waiting-input", "waiting-permission", "queued"]).toContain(l.state);
        // The detail is always one line, bounded; since is a valid time no later than now.
        if (l.detail !== undefined) expect(l.detail).toMatch(/^[^\n]{1,160}$/);
        expect(Date.parse(l.since)).toBeLessThanOrEqual(t0 + (s + nowS) * 1000);
      }),
    );
  });
});

describe("the stall limit", () => {
  it("MUSTER_STALL_SECONDS, else the config's stallSeconds, else 60 s", () => {
    const noConfig = { XDG_CONFIG_HOME: "/nonexistent-muster-config" };
    expect(stallMsFrom(noConfig)).toBe(60_000);
    expect(stallMsFrom({ ...noConfig, MUSTER_STALL_SECONDS: "2.5" })).toBe(2_500);
    for (const bad of ["0", "-3", "soon"])
      expect(stallMsFrom({ ...noConfig, MUSTER_STALL_SECONDS: bad })).toBe(60_000);
  });
});
