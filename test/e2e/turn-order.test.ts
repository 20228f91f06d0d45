import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { writeInboxItem } from "../../src/artifacts/inbox.js";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-order");
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A UUIDv7 minted at `ms`: what a sender whose clock reads `ms` puts on its turn. */
function turnIdAt(ms: number): string {
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  b[6] = 0x70 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `muster send` as it runs on a machine whose clock is `skewMs` off: the inbox writer, with that turn id. */
function sendWithSkewedClock(dir: string, prompt: string, skewMs: number): string {
  const turnId = turnIdAt(Date.now() + skewMs);
  writeInboxItem(path.join(dir, "inbox"), {
    v: 1,
    turnId,
    prompt,
    source: "inbox",
    createdAt: new Date(Date.now() + skewMs).toISOString(),
  });
  return turnId;
}

const started = (dir: string): string[] =>
  readEvents(dir)
    .filter((e) => e.type === "turn_started")
    .map((e) => e.turnId as string);
const completed = (dir: string, turnId: string): boolean =>
  readEvents(dir).some((e) => e.type === "completion" && e.turnId === turnId);

describe("turn order does not follow the sender's clock", () => {
  it("queued turns run in the order they arrived, whatever their ids' timestamps say", async () => {
    const gate = path.join(sb.cwd, "order-gate");
    const spawned = (await sb.json(["spawn", `first\nmock: gate=${encodeURIComponent(gate)}`])).data;
    const {
      id,
      turnId: first,
      artifactDir: dir,
    } = spawned as { id: string; turnId: string; artifactDir: string };
    await until(() => started(dir).length === 1, 30_000);
    const send = async (p: string) => (await sb.json(["send", id, p])).data.turnId as string;
    const a = await send("task A");
    const b = sendWithSkewedClock(dir, "task B", -DAY);
    const c = await send("task C");
    const d = sendWithSkewedClock(dir, "task D", DAY);
    const e = await send("task E");
    expect((await sb.json(["status", id])).data.queuedTurns.map((q: { turnId: string }) => q.turnId)).toEqual(
      [a, b, c, d, e],
    );
    fs.writeFileSync(gate, "");
    await until(() => completed(dir, e) && completed(dir, d), 60_000);
    expect(started(dir)).toEqual([first, a, b, c, d, e]);
  }, 180_000);

  it("send --wait waits for the turn it queued, not one whose id looks newer; wait and result follow arrival", async () => {
    const spawned = (await sb.json(["spawn", "--wait", "first"])).data;
    const { id, artifactDir: dir } = spawned.spawned as { id: string; artifactDir: string };
    // A turn sent from a machine an hour ahead: it runs and settles first.
    const ahead = sendWithSkewedClock(dir, "task from the future", HOUR);
    await until(() => completed(dir, ahead), 30_000);

    const gate = path.join(sb.cwd, "wait-gate");
    const sent = sb.json(["send", "--wait", id, `task now\nmock: gate=${encodeURIComponent(gate)}`]);
    // Its own turn holds at the gate: send --wait must still be waiting, not print the earlier answer.
    await until(() => started(dir).length === 3, 30_000);
    const early = await sb.json(["wait", id, "--timeout", "1s"]);
    expect(early.exitCode).toBe(124);
    expect(early.data.results).toEqual([]);
    fs.writeFileSync(gate, "");
    const out = await sent;
    expect(out.exitCode).toBe(0);
    expect(out.data.results).toHaveLength(1);
    expect(out.data.results[0].turnId).toBe(out.data.sent.turnId);
    expect(out.data.results[0].text).toContain("Task: task now");
    const latest = await sb.json(["result", id]);
    expect(latest.data.turnId).toBe(out.data.sent.turnId);
  }, 180_000);
});
