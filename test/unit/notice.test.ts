import { describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { noticeOf } from "../../src/notify/notice.js";

const who = { child: "0197a3c0-5e30-7e2b-8c3d-9e0f1a2b3c4d", agent: "pi" };
const T = "0197a3c0-5e30-7e2b-8c3d-000000000001";
const ev = (e: Record<string, unknown>): MusterEvent =>
  ({
    v: 1,
    eventId: "0197a3c0-5e48-7000-8000-000000000009",
    seq: 3,
    ts: "2026-12-06T00:00:00.000Z",
    ...e,
  }) as MusterEvent;

describe("which events a person is told of", () => {
  it("waiting: a question, a permission the parent must answer (not one the agent merely reports)", () => {
    expect(noticeOf(ev({ type: "question", requestId: T, text: "Which branch?" }), who)).toMatchObject({
      event: "waiting",
      title: "1a2b3c4d (pi) asks a question",
      text: "Which branch?",
    });
    const asked = ev({
      type: "permission",
      turnId: T,
      state: "pending",
      tool: "Bash",
      summary: "rm -rf x",
      requestId: T,
    });
    expect(noticeOf(asked, who)).toMatchObject({ event: "waiting", text: "rm -rf x" });
    expect(
      noticeOf(ev({ type: "permission", turnId: T, state: "pending", tool: "Bash" }), who),
    ).toBeUndefined();
  });

  it("finished, failed, paused; a stop someone asked for, and a parent's record, are neither", () => {
    const done = (e: Record<string, unknown>) =>
      noticeOf(ev({ type: "completion", turnId: T, by: "child", ...e }), who);
    expect(done({ status: "completed" })?.event).toBe("finished");
    expect(done({ status: "failed_verification", reason: "the check `npm test` exited 1" })).toMatchObject({
      event: "failed",
      title: "1a2b3c4d (pi) failed verification",
    });
    expect(
      done({ status: "errored", providerError: { kind: "quota", message: "out of credits" } }),
    ).toMatchObject({
      event: "paused",
      text: "out of credits",
    });
    expect(
      done({ status: "errored", providerError: { kind: "rate_limit", message: "slow down" } })?.event,
    ).toBe("failed");
    expect(done({ status: "cancelled" })).toBeUndefined();
    expect(done({ status: "interrupted" })).toBeUndefined();
    expect(
      noticeOf(ev({ type: "completion", turnId: T, by: "parent", status: "lost" }), who),
    ).toBeUndefined();
    expect(noticeOf(ev({ type: "progress", text: "x" }), who)).toBeUndefined();
  });

  it("lost: a child whose host died, whoever recorded it; the turn it lost with it is not told apart", () => {
    const exited = (e: Record<string, unknown>) => noticeOf(ev({ type: "child_exited", ...e }), who);
    expect(
      exited({ reason: "lost", by: "parent", detail: "child host (pid 42) is gone (signal SIGKILL)" }),
    ).toMatchObject({
      event: "lost",
      title: "1a2b3c4d (pi) was lost",
      text: "child host (pid 42) is gone (signal SIGKILL)",
      eventId: "0197a3c0-5e48-7000-8000-000000000009",
    });
    expect(exited({ reason: "lost", by: "child", detail: "the pane was closed" })?.event).toBe("lost");
    for (const reason of ["cancelled", "closed", "error"])
      expect(exited({ reason, by: "child" }), reason).toBeUndefined();
    expect(noticeOf(ev({ type: "completion", turnId: T, by: "child", status: "lost" }), who)).toBeUndefined();
  });
});
