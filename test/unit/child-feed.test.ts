import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { ChildFeed } from "../../src/artifacts/feed.js";
import type { MalformedLine } from "../../src/artifacts/reader.js";
import { localChildStore } from "../../src/artifacts/store-local.js";
import { until } from "../helpers/cli.js";

const dirs: string[] = [];
const feeds: ChildFeed[] = [];
const childDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-feed-"));
  dirs.push(d);
  return d;
};
const feedOf = (pollMs: number): ChildFeed => {
  const f = new ChildFeed({ pollMs });
  feeds.push(f);
  return f;
};
afterEach(() => {
  for (const f of feeds.splice(0)) f.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const line = (seq: number): string => `${JSON.stringify({ type: "progress", seq, text: `n${seq}` })}\n`;
const seqs = (events: MusterEvent[]): number[] => events.map((e) => e.seq);
const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
// Long enough that only an fs.watch hint can bring an event within a test's time.
const NO_POLL = 600_000;

describe("ChildFeed", () => {
  it("hands on appends another process makes, by fs.watch hint alone", async () => {
    const store = localChildStore(childDir());
    fs.writeFileSync(store.eventsFile, line(1));
    const got: MusterEvent[] = [];
    const sub = feedOf(NO_POLL).subscribe(store, (e) => got.push(...e));
    sub.pump();
    expect(seqs(got)).toEqual([1]);
    // One record per write, a pause between: each append is its own notification.
    const script = `const fs=require("fs");let n=2;const t=setInterval(()=>{fs.appendFileSync(process.argv[1],JSON.stringify({type:"progress",seq:n,text:"n"+n})+"\\n");if(++n>4){clearInterval(t)}},30)`;
    const writer = spawn(process.execPath, ["-e", script, store.eventsFile], { stdio: "ignore" });
    await new Promise((r) => writer.once("exit", r));
    await until(() => got.length === 4, 5000, 10);
    expect(seqs(got)).toEqual([1, 2, 3, 4]);
    expect(sub.cursor).toBe(fs.statSync(store.eventsFile).size);
  });

  it("hands on a log made after it subscribed, by fs.watch hints alone (its folder's, then its own)", async () => {
    // A child just made: the watcher attaches to its folder before the host writes its first record.
    const store = localChildStore(childDir());
    const got: MusterEvent[] = [];
    const sub = feedOf(NO_POLL).subscribe(store, (e) => got.push(...e));
    sub.pump();
    expect(got).toEqual([]);
    const script = `const fs=require("fs");let n=1;const t=setInterval(()=>{fs.appendFileSync(process.argv[1],JSON.stringify({type:"progress",seq:n,text:"n"+n})+"\\n");if(++n>3){clearInterval(t)}},30)`;
    const writer = spawn(process.execPath, ["-e", script, store.eventsFile], { stdio: "ignore" });
    await new Promise((r) => writer.once("exit", r));
    await until(() => got.length === 3, 5000, 10);
    expect(seqs(got)).toEqual([1, 2, 3]);
  });

  it("holds a torn line until its LF arrives, then hands on the whole record", async () => {
    const store = localChildStore(childDir());
    const torn = line(2);
    fs.writeFileSync(store.eventsFile, line(1) + torn.slice(0, 10));
    const got: MusterEvent[][] = [];
    const malformed: MalformedLine[] = [];
    const sub = feedOf(NO_POLL).subscribe(store, (e) => got.push(e), {
      onMalformed: (m) => malformed.push(m),
    });
    sub.pump();
    expect(got.map(seqs)).toEqual([[1]]);
    fs.appendFileSync(store.eventsFile, torn.slice(10));
    await until(() => got.length === 2, 5000, 10);
    expect(got.map(seqs)).toEqual([[1], [2]]);
    expect(malformed).toEqual([]);
  });

  it("starts over from 0 when the file shrinks, and says so", async () => {
    const store = localChildStore(childDir());
    fs.writeFileSync(store.eventsFile, line(1) + line(2) + line(3));
    const got: number[] = [];
    const malformed: MalformedLine[] = [];
    const sub = feedOf(NO_POLL).subscribe(store, (e) => got.push(...seqs(e)), {
      onMalformed: (m) => malformed.push(m),
    });
    sub.pump();
    const before = sub.cursor;
    // Truncated in place (same inode, so the watch still hints) to something shorter.
    fs.truncateSync(store.eventsFile, 0);
    fs.appendFileSync(store.eventsFile, line(7));
    await until(() => got.includes(7), 5000, 10);
    expect(got).toEqual([1, 2, 3, 7]);
    expect(malformed[0]).toMatchObject({ offset: before, length: 0 });
    expect(malformed[0]!.reason).toMatch(/file shrank to \d+ bytes; re-reading from 0/);
  });

  it("brings what no notification announced on its safety poll, and only then (pollMs 0: on pumpAll)", async () => {
    // No folder at subscribe time: no watch can be set up on it or its log, so only a poll can find the events.
    const store = localChildStore(path.join(childDir(), "later"));
    const polled: number[] = [];
    const manual: number[] = [];
    feedOf(100).subscribe(store, (e) => polled.push(...seqs(e)));
    const owned = feedOf(0);
    owned.subscribe(store, (e) => manual.push(...seqs(e)));
    execFileSync(process.execPath, [
      "-e",
      `const fs=require("fs");fs.mkdirSync(require("path").dirname(process.argv[1]));fs.writeFileSync(process.argv[1], process.argv[2])`,
      store.eventsFile,
      line(1),
    ]);
    await until(() => polled.length === 1, 5000, 10);
    expect(manual).toEqual([]);
    owned.pumpAll();
    expect(manual).toEqual([1]);
  });

  it("keeps reading a file replaced under its watch (the old inode's watch is dead) on the poll", async () => {
    const store = localChildStore(childDir());
    fs.writeFileSync(store.eventsFile, line(1) + line(2));
    const polled: number[] = [];
    const unpolled: number[] = [];
    const malformed: string[] = [];
    feedOf(100)
      .subscribe(store, (e) => polled.push(...seqs(e)), { onMalformed: (m) => malformed.push(m.reason) })
      .pump();
    feedOf(NO_POLL)
      .subscribe(store, (e) => unpolled.push(...seqs(e)))
      .pump();
    fs.rmSync(store.eventsFile);
    fs.writeFileSync(store.eventsFile, line(5));
    await until(() => polled.includes(5), 5000, 10);
    expect(polled).toEqual([1, 2, 5]);
    expect(malformed.some((r) => r.startsWith("file shrank"))).toBe(true);
    // The appends that follow reach the watch-only subscriber never (its watch is on the removed file).
    fs.appendFileSync(store.eventsFile, line(6));
    await until(() => polled.includes(6), 5000, 10);
    expect(unpolled).not.toContain(6);
  });

  it("reports a file it cannot read safely once, not on every poll, and goes on once it can", async () => {
    const store = localChildStore(childDir());
    execFileSync("mkfifo", [store.eventsFile]);
    const errors: string[] = [];
    const fallback: MalformedLine[] = [];
    const got: number[] = [];
    const feed = feedOf(0);
    feed.subscribe(store, (e) => got.push(...seqs(e)), { onError: (e) => errors.push(e.message) });
    feed.subscribe(store, () => {}, { onMalformed: (m) => fallback.push(m) });
    for (let i = 0; i < 3; i++) feed.pumpAll();
    expect(errors).toHaveLength(1);
    expect(fallback).toHaveLength(1);
    expect(fallback[0]).toMatchObject({ offset: 0, length: 0 });
    fs.rmSync(store.eventsFile);
    fs.writeFileSync(store.eventsFile, line(1));
    feed.pumpAll();
    expect(got).toEqual([1]);
  });

  it("polls many children on one timer, which goes once the last of them leaves", async () => {
    const stores = Array.from({ length: 40 }, () => localChildStore(childDir()));
    const got = new Map<string, number[]>();
    const base = timeouts();
    const feed = feedOf(100);
    const subs = stores.map((s) => feed.subscribe(s, (e) => got.set(s.dir, seqs(e))));
    expect(timeouts()).toBe(base + 1);
    // Files made after subscribing: no watch on any of them, the one timer brings them all.
    for (const [i, s] of stores.entries()) fs.writeFileSync(s.eventsFile, line(i + 1));
    await until(() => got.size === stores.length, 5000, 10);
    expect(stores.map((s) => got.get(s.dir))).toEqual(stores.map((_, i) => [i + 1]));
    // A subscriber leaving from inside its own callback does not disturb the others' reads.
    const leaver = feed.subscribe(stores[0]!, () => leaver.close());
    const stayer: number[] = [];
    feed.subscribe(stores[1]!, (e) => stayer.push(...seqs(e)));
    feed.pumpAll();
    expect(stayer).toEqual([2]);
    // (Counted around each step: the test runner keeps timers of its own that come and go.)
    const running = timeouts();
    for (const s of subs) s.close();
    expect(timeouts()).toBe(running);
    feed.close();
    expect(timeouts()).toBe(running - 1);
    expect(feed.size).toBe(0);
  });
});
