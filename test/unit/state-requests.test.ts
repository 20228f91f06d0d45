// The open requests folded with a child's state (what `muster inbox`, MCP and every update of `muster web`
// list): a question or a permission routed to the parent stays open until answered, granted or denied, its
// turn settles, or the host exits; a request asked again keeps its place.
import { describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { applyEvents, emptyState } from "../../src/core/state.js";

const T1 = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e6f";
const T2 = "01970c2e-8f3a-7b21-9c4d-1a2b3c4d5e70";
let seq = 0;
const ev = (e: Record<string, unknown>): MusterEvent =>
  ({
    v: 1,
    eventId: `e${++seq}`,
    seq,
    ts: `2026-01-01T00:00:${String(seq % 60).padStart(2, "0")}.000Z`,
    ...e,
  }) as MusterEvent;
const ask = (requestId: string, turnId = T1, text = "which?") =>
  ev({ type: "question", turnId, requestId, text });
const permission = (requestId: string, state: string, turnId = T1) =>
  ev({ type: "permission", turnId, requestId, state, tool: "Bash", summary: "ls" });
const open = (events: MusterEvent[]) => applyEvents(emptyState(), events).requests.map((q) => q.requestId);

describe("open requests in the state fold", () => {
  it("a question is open until answered; a permission until granted, denied or cancelled", () => {
    expect(open([ask("q1"), permission("p1", "pending")])).toEqual(["q1", "p1"]);
    expect(open([ask("q1"), ev({ type: "answered", turnId: T1, requestId: "q1" })])).toEqual([]);
    for (const end of ["granted", "denied", "cancelled"])
      expect(open([permission("p1", "pending"), permission("p1", end)])).toEqual([]);
    // A permission the runner settled itself (no request to the parent) is never open.
    expect(open([ev({ type: "permission", turnId: T1, state: "pending", tool: "Bash" })])).toEqual([]);
  });

  it("its turn settling closes a turn's requests, not another turn's; the host exiting closes all", () => {
    const s = applyEvents(emptyState(), [ask("q1", T1), ask("q2", T2), permission("p1", "pending", T1)]);
    applyEvents(s, [ev({ type: "completion", turnId: T1, status: "completed", by: "child" })]);
    expect(s.requests.map((q) => q.requestId)).toEqual(["q2"]);
    applyEvents(s, [ev({ type: "child_exited", reason: "closed" })]);
    expect(s.requests).toEqual([]);
  });

  it("a request asked again under its id keeps its place, with the newer record", () => {
    const s = applyEvents(emptyState(), [ask("q1", T1, "first"), ask("q2"), ask("q1", T1, "again")]);
    expect(s.requests.map((q) => q.requestId)).toEqual(["q1", "q2"]);
    expect(s.requests[0]).toMatchObject({ type: "question", text: "again" });
  });
});
