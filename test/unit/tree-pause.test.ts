// The tree's pause record, the held turn's wait, the rate-limit wait's decision and the live state of a held
// turn: real files in a temp dir, no child host.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { pauseInForce, pauseTree, resumeTree } from "../../src/artifacts/tree-pause.js";
import { waitWhilePaused } from "../../src/child/pause-gate.js";
import { MAX_RATE_LIMIT_WAIT_MS, MAX_RATE_LIMIT_WAITS, rateLimitWait } from "../../src/child/rate-limit.js";
import type { Outcome } from "../../src/child/run-plan.js";
import { liveOf } from "../../src/core/children.js";
import { applyEvents, emptyState } from "../../src/core/state.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-pause-unit-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
let n = 0;
const primary = () => {
  const d = path.join(base, `p${++n}`);
  fs.mkdirSync(d, { recursive: true });
  return d;
};
const by = { child: "01900000-0000-7000-8000-0000000000c1", turnId: "01900000-0000-7000-8000-0000000000aa" };

describe("the pause record", () => {
  it("is written once: the first refusal stays the one in force", () => {
    const dir = primary();
    const first = pauseTree(dir, { kind: "quota", message: "You exceeded your current quota\nmore" }, by);
    expect(first).toMatchObject({
      kind: "quota",
      reason: "You exceeded your current quota",
      child: by.child,
    });
    const second = pauseTree(dir, { kind: "auth", message: "bad key" }, by);
    expect(second.pauseId).toBe(first.pauseId);
    expect(pauseInForce(dir)?.kind).toBe("quota");
    expect(resumeTree(dir)?.pauseId).toBe(first.pauseId);
    expect(pauseInForce(dir)).toBeUndefined();
    expect(resumeTree(dir)).toBeUndefined();
  });

  it("lifts by itself once its reset time has gone by; a new refusal then pauses anew", () => {
    const dir = primary();
    const resetAt = new Date(Date.now() + 60_000).toISOString();
    const p = pauseTree(dir, { kind: "quota", message: "q", resetAt }, by);
    expect(pauseInForce(dir)).toBeDefined();
    expect(pauseInForce(dir, Date.now() + 61_000)).toBeUndefined();
    const past = primary();
    pauseTree(past, { kind: "quota", message: "q", resetAt: new Date(Date.now() - 1000).toISOString() }, by);
    expect(pauseInForce(past)).toBeUndefined();
    expect(pauseTree(past, { kind: "auth", message: "a" }, by).kind).toBe("auth");
    expect(p.resetAt).toBe(resetAt);
  });

  it("a torn or foreign file pauses nothing", () => {
    const dir = primary();
    fs.writeFileSync(path.join(dir, "pause.json"), '{"v":1,"kind":"quo');
    expect(pauseInForce(dir)).toBeUndefined();
    fs.writeFileSync(path.join(dir, "pause.json"), JSON.stringify({ v: 2, pauseId: "x", reason: "r" }));
    expect(pauseInForce(dir)).toBeUndefined();
  });
});

describe("a held turn's wait", () => {
  it("tells each pause once, and ends when it lifts", async () => {
    const dir = primary();
    pauseTree(dir, { kind: "quota", message: "q" }, by);
    const told: string[] = [];
    let looks = 0;
    let looked: () => void = () => {};
    const thrice = new Promise<void>((r) => {
      looked = r;
    });
    const waiting = waitWhilePaused(
      () => {
        if (++looks === 3) looked();
        return pauseInForce(dir);
      },
      (p) => told.push(p.pauseId),
      () => false,
    );
    // Three looks at the same pause: told of it once.
    await thrice;
    expect(told).toHaveLength(1);
    resumeTree(dir);
    expect(await waiting).toBe(true);
  });

  it("ends false when the child is stopped meanwhile", async () => {
    const dir = primary();
    pauseTree(dir, { kind: "auth", message: "a" }, by);
    let stop = false;
    const waiting = waitWhilePaused(
      () => pauseInForce(dir),
      () => {
        stop = true;
      },
      () => stop,
    );
    expect(await waiting).toBe(false);
  });
});

describe("the rate-limit wait", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  const errored = (resetInMs?: number): Outcome => ({
    status: "errored",
    exitCode: null,
    signal: null,
    providerError: {
      kind: "rate_limit",
      message: "429",
      ...(resetInMs !== undefined ? { resetAt: new Date(now + resetInMs).toISOString() } : {}),
    },
  });
  it("waits for a reset within the bound, a bounded number of times", () => {
    expect(rateLimitWait(errored(20_000), 0, now)).toBe(20_000);
    expect(rateLimitWait(errored(-5_000), 0, now)).toBe(0);
    expect(rateLimitWait(errored(MAX_RATE_LIMIT_WAIT_MS + 1), 0, now)).toBeUndefined();
    expect(rateLimitWait(errored(20_000), MAX_RATE_LIMIT_WAITS, now)).toBeUndefined();
  });
  it("does not wait without a reset time, or for other errors", () => {
    expect(rateLimitWait(errored(), 0, now)).toBeUndefined();
    const quota: Outcome = { ...errored(1000), providerError: { kind: "quota", message: "q", resetAt: "x" } };
    expect(rateLimitWait(quota, 0, now)).toBeUndefined();
    expect(rateLimitWait({ status: "completed", exitCode: 0, signal: null }, 0, now)).toBeUndefined();
  });
});

describe("the live state of a held turn", () => {
  const T = "01900000-0000-7000-8000-0000000000aa";
  const t0 = Date.parse("2026-01-01T00:00:00.000Z");
  const at = (s: number) => new Date(t0 + s * 1000).toISOString();
  let seq = 0;
  const ev = (s: number, e: Record<string, unknown>) =>
    ({ v: 1, eventId: `e${++seq}`, seq, ts: at(s), ...e }) as unknown as MusterEvent;
  const events = [
    ev(0, { type: "child_started", pid: 42, runner: "mock", by: "spawn" }),
    ev(1, { type: "turn_held", turnId: T, kind: "quota", reason: "no credit", resetAt: at(3600) }),
  ];
  it("is queued, saying paused, why and until when; a started turn is no longer held", () => {
    const s = applyEvents(emptyState(), events);
    expect(liveOf(s, 1, { now: t0 + 5000, stallMs: 60_000, createdAt: at(0) })).toMatchObject({
      state: "queued",
      detail: `paused: no credit, until ${at(3600)}`,
    });
    const started = applyEvents(emptyState(), [
      ...events,
      ev(9, {
        type: "turn_started",
        turnId: T,
        source: "inbox",
        promptBytes: 1,
        promptSha256: "",
        promptPath: "p",
      }),
    ]);
    expect(liveOf(started, 0, { now: t0 + 10_000, stallMs: 60_000, createdAt: at(0) }).state).toBe("working");
  });
});
