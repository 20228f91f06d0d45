/**
 * The clock of `muster top` over an idle tree (ink-testing-library, real children in panes of a private tmux
 * server, the real core watcher): a tick redraws only when a shown time reads differently. Only Date is
 * faked, to move the wall clock past minutes; every timer runs for real.
 */
import { render } from "ink-testing-library";
import { createElement } from "react";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createMuster, type Muster } from "../../src/index.js";
import { coreActions } from "../../src/tui/actions.js";
import { Top } from "../../src/tui/app.js";
import { TopSource } from "../../src/tui/source.js";
import { sleep, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-topclock");
let m: Muster;
const ids: string[] = [];
const sources: TopSource[] = [];
const short = (id: string) => id.slice(-8);

/** Polls on the monotonic clock: Date is frozen in these tests. */
async function within<T>(fn: () => T, ms: number): Promise<T> {
  const end = performance.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (performance.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await sleep(50);
  }
}

beforeAll(async () => {
  m = createMuster({ env: sb.env, cwd: sb.cwd });
  for (const n of [1, 2]) ids.push((await m.spawn({ agent: "mock", prompt: `mock: reply=idle-${n}` })).id);
  await m.wait(ids, { mode: "all", timeoutMs: 30_000 });
}, 60_000);

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  for (const s of sources) await s.close();
  await m.cancelTree(undefined, { graceMs: 2000 });
});

describe("muster top clock (idle tree)", () => {
  it("a tick that changes no shown time draws nothing; the next minute is drawn", async () => {
    const created = (await m.list()).map((c) => Date.parse(c.entry.createdAt));
    const [first, last] = [Math.min(...created), Math.max(...created)];
    // Both rows must stay in one minute over the 20 s moved below.
    expect(last - first).toBeLessThan(30_000);
    // Ten minutes on, 2 s past the younger child's minute: both rows read "10m".
    const base = last + 10 * 60_000 + 2000;
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(base);

    const source = new TopSource(m, { minIntervalMs: 100, idleClockMs: 100 });
    sources.push(source);
    const ui = render(
      createElement(Top, { source, actions: coreActions(m), size: { columns: 100, rows: 12 } }),
    );
    const rowOf = (id: string) => (ui.lastFrame() ?? "").split("\n").find((l) => l.includes(short(id))) ?? "";
    await within(() => ids.every((id) => / 10m /.test(rowOf(id))), 15_000);
    await sleep(500); // the first snapshot's redraws are over
    const drawn = ui.frames.length;

    // The wall clock moves 10 s, then 20 s: clock ticks (every 100 ms) see new times that read the same.
    vi.setSystemTime(base + 10_000);
    await sleep(600);
    vi.setSystemTime(base + 20_000);
    await sleep(600);
    expect(ui.frames.length).toBe(drawn);
    for (const id of ids) expect(rowOf(id)).toMatch(/ 10m /);

    // Past the minute: the next tick draws the new times.
    vi.setSystemTime(base + 60_000);
    await within(() => ids.every((id) => / 11m /.test(rowOf(id))), 5_000);
    expect(ui.frames.length).toBeGreaterThan(drawn);
    ui.unmount();
  }, 40_000);

  it("a child younger than a minute shows seconds: its time still moves on the idle clock", async () => {
    const source = new TopSource(m, { minIntervalMs: 100, idleClockMs: 100 });
    sources.push(source);
    const ui = render(
      createElement(Top, { source, actions: coreActions(m), size: { columns: 100, rows: 12 } }),
    );
    const created = Date.parse((await m.list()).find((c) => c.entry.id === ids[0])!.entry.createdAt);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(created + 20_000);
    const time = () =>
      / (\d+s) /.exec((ui.lastFrame() ?? "").split("\n").find((l) => l.includes(short(ids[0]!))) ?? "")?.[1];
    await within(() => time() === "20s", 15_000);
    vi.setSystemTime(created + 31_000);
    await within(() => time() === "31s", 5_000);
    ui.unmount();
  }, 40_000);
});
