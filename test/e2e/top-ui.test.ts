/**
 * The `muster top` component (ink-testing-library) on real children: mock agents in panes of a private
 * tmux server, a real state root, the real core watcher. Keys go in through stdin as a terminal sends them.
 */
import { render } from "ink-testing-library";
import { createElement } from "react";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMuster, type Muster } from "../../src/index.js";
import { coreActions } from "../../src/tui/actions.js";
import { Top } from "../../src/tui/app.js";
import { TopSource } from "../../src/tui/source.js";
import { childRow } from "../../src/tui/view.js";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-topui");
const DOWN = "\x1b[B";
const ESC = "\x1b";
let m: Muster;
/** a: working, with a grandchild g under it; b: idle with an answer; c: cancelled (settled). */
const ids = { a: "", g: "", b: "", c: "" };
const short = (id: string) => id.slice(-8);
const sources: TopSource[] = [];

beforeAll(async () => {
  m = createMuster({ env: sb.env, cwd: sb.cwd });
  ids.a = (await m.spawn({ agent: "mock", prompt: "mock: sleep=120 tools=60\nlong work" })).id;
  // A child of a: its registry entry names a as parent, as when a itself runs `muster spawn`.
  const inA = createMuster({
    env: { ...sb.env, MUSTER_CHILD_ID: ids.a, MUSTER_DEPTH: "0" },
    cwd: sb.cwd,
    primary: m.primary,
  });
  ids.g = (await inA.spawn({ agent: "mock", prompt: "mock: sleep=120 tools=60\ngrandchild work" })).id;
  ids.b = (await m.spawn({ agent: "mock", prompt: "mock: reply=the-answer-of-b\nquick" })).id;
  ids.c = (await m.spawn({ agent: "mock", prompt: "settles at once" })).id;
  await m.wait([ids.b, ids.c], { timeoutMs: 30_000 });
  await m.cancel(ids.c);
  await until(async () => (await m.status(ids.a)).state.lastActivity?.text.includes("step"), 20_000);
}, 90_000);

afterAll(async () => {
  for (const s of sources) await s.close();
  await m.cancelTree(undefined, { graceMs: 2000 });
});

/** Renders top at a fixed size on the sandbox's primary; resolves once the first snapshot shows. */
async function open(columns = 80, rows = 24) {
  const source = new TopSource(m, { minIntervalMs: 200 });
  sources.push(source);
  const ui = render(createElement(Top, { source, actions: coreActions(m), size: { columns, rows } }));
  await until(() => ui.lastFrame()?.includes(short(ids.a)), 15_000);
  // The screen as a person reads it: styles (inverse selection, dim context) and erases stripped.
  const frame = () => (ui.lastFrame() ?? "").replace(/\x1b\[[0-9;]*[A-Za-z]/g, "");
  const press = async (...keys: string[]) => {
    for (const k of keys) {
      ui.stdin.write(k);
      await new Promise((r) => setTimeout(r, 30));
    }
  };
  const lines = () => frame().split("\n");
  // Line 0 is the title (it names the filter), line 1 the header: rows start at line 2.
  const rowOf = (id: string) => lines().findIndex((l, i) => i >= 2 && l.includes(short(id)));
  return { ui, frame, lines, press, rowOf, source };
}

describe("muster top (component, real children)", () => {
  it("shows the tree by lineage, the settled child hidden and counted, H shows it", async () => {
    const t = await open();
    const [a, g, b] = [t.rowOf(ids.a), t.rowOf(ids.g), t.rowOf(ids.b)];
    expect(a).toBeGreaterThan(0);
    // The grandchild sits right under its parent, indented one level.
    expect(g).toBe(a + 1);
    expect(t.lines()[g]).toMatch(new RegExp(`^  ${short(ids.g)}`));
    expect(b).toBeGreaterThan(g);
    expect(t.rowOf(ids.c)).toBe(-1);
    expect(t.frame()).toContain("hidden: 1 settled");
    // a's row follows its events (its mock reports a tool step every second): the activity moves on.
    const step = () => /step (\d+)/.exec(t.lines()[t.rowOf(ids.a)] ?? "")?.[1];
    const before = await until(step, 10_000);
    await until(() => step() !== before, 10_000);
    await t.press("H");
    await until(() => t.rowOf(ids.c) > 0);
    expect(t.lines()[t.rowOf(ids.c)]).toContain("closed");
    expect(t.frame()).toContain("hidden: none");
    await t.press("H");
    await until(() => t.rowOf(ids.c) === -1);
    t.ui.unmount();
  });

  it("filters with /, keeps a matching grandchild's parent as context, and counts what it hid", async () => {
    const t = await open();
    await t.press("/", ...short(ids.g), "\r");
    await until(() => t.rowOf(ids.b) === -1);
    expect(t.rowOf(ids.g)).toBe(t.rowOf(ids.a) + 1);
    // b and c do not match (c is settled too: the filter is what hides it).
    expect(t.frame()).toMatch(/hidden: 2 filtered/);
    expect(t.frame()).toContain(`filter "${short(ids.g)}"`);
    await t.press(ESC);
    await until(() => t.rowOf(ids.b) > 0);
    t.ui.unmount();
  });

  it("x on a working child asks first; a burst of keys (a held y) is no answer and aborts", async () => {
    const t = await open();
    // The top row is a.
    await t.press("x");
    await until(() => new RegExp(`cancel ${short(ids.a)}, working\\? y/N`).test(t.frame()));
    await t.press("yy");
    await until(() => t.frame().includes("cancel aborted"));
    expect((await m.status(ids.a)).status).toBe("running");
    t.ui.unmount();
  });

  it("Enter expands the selected child (turns, artifact dir, session file, last output); ← collapses", async () => {
    const t = await open(100, 30);
    // Rows: a, g, b.
    await t.press(DOWN, "j", "\r");
    await until(() => t.frame().includes("last output"));
    // The selected row is drawn inverse (and only that row).
    const raw = (t.ui.lastFrame() ?? "").split("\n");
    expect(raw.filter((l) => l.includes("\x1b[7m"))).toEqual([expect.stringContaining(short(ids.b))]);
    const f = t.frame();
    expect(f).toContain("the-answer-of-b");
    // A path too wide is cut in its middle: the child's id at its end stays.
    expect(f).toMatch(new RegExp(`^ {4}artifacts /.*${ids.b}$`, "m"));
    expect(f).toContain("session");
    expect(f).toMatch(/1 turn\(s\): 1\. completed/);
    await t.press("\x1b[D");
    await until(() => !t.frame().includes("last output"));
    t.ui.unmount();
  });

  it("fits 80×24 and narrower terminals: no line wider than the terminal, columns given up in order", async () => {
    for (const [cols, rows] of [
      [80, 24],
      [60, 24],
      [40, 12],
    ] as const) {
      const t = await open(cols, rows);
      const ls = t.lines();
      expect(ls.length).toBeLessThanOrEqual(rows);
      for (const l of ls) expect([...l].length).toBeLessThanOrEqual(cols);
      expect(ls[1]).toMatch(/^NAME\s+.*STATE/);
      if (cols === 80) expect(ls[1]).toContain("COST");
      if (cols < 80) expect(ls[1]).not.toContain("MODEL");
      if (cols === 40) expect(ls[1]).not.toContain("COST");
      t.ui.unmount();
    }
    const wide = await open(140, 24);
    expect(wide.lines()[1]).toContain("MODEL");
    expect(wide.lines()[wide.rowOf(ids.b)]).toContain("mock:default");
    // A resize re-lays the same rows out.
    wide.ui.rerender(
      createElement(Top, { source: wide.source, actions: coreActions(m), size: { columns: 50, rows: 24 } }),
    );
    await until(() => !wide.lines()[1]?.includes("MODEL"));
    for (const l of wide.lines()) expect([...l].length).toBeLessThanOrEqual(50);
    wide.ui.unmount();
  });

  it("rows that do not fit are cut, counted, and scrolled to", async () => {
    // 8 rows: title, header, footer, message, one line of key help and 3 rows of tree for a, g, b (and c
    // once shown).
    const t = await open(80, 8);
    await t.press("H");
    await until(() => /1 cut/.test(t.frame()));
    expect(t.rowOf(ids.c)).toBe(-1);
    await t.press("j", "j", "j");
    await until(() => t.rowOf(ids.c) > 0);
    expect(t.rowOf(ids.a)).toBe(-1);
    expect(t.frame()).toMatch(/1 cut/);
    t.ui.unmount();
  });

  it("s sends a follow-up to the selected child, and x cancels it after a y", async () => {
    const t = await open();
    await t.press("j", "j");
    await t.press("s");
    await until(() => t.frame().includes(`send to ${short(ids.b)}`));
    await t.press(..."mock: reply=second", "\r");
    await until(() => t.frame().includes(`sent to ${short(ids.b)}`), 10_000);
    await until(async () => (await m.status(ids.b)).state.completions.size === 2, 30_000);
    // A live child is asked about first; only y cancels it.
    await t.press("x");
    await until(() => new RegExp(`cancel ${short(ids.b)}, [a-z-]+\\? y/N`).test(t.frame()));
    await t.press("y");
    await until(async () => (await m.status(ids.b)).status === "closed", 20_000);
    await until(() => t.frame().includes(`cancelled ${short(ids.b)}`));
    // The others run on: nothing but the selected child was touched.
    expect((await m.status(ids.a)).status).toBe("running");
    t.ui.unmount();
  });

  it("s on a settled child continues it (a resumed turn in a new pane); r re-reads", async () => {
    const t = await open();
    await t.press("H");
    await until(() => t.rowOf(ids.b) > 0);
    expect(t.lines()[t.rowOf(ids.b)]).toContain("closed");
    await t.press("j", "j", "s");
    await until(() => t.frame().includes(`send to ${short(ids.b)}`));
    await t.press(..."mock: reply=resumed", "\r");
    await until(async () => (await m.status(ids.b)).state.completions.size === 3, 30_000);
    expect(m.result(ids.b).text).toContain("resumed");
    await t.press("r");
    await until(() => t.frame().includes("refreshed"));
    await until(() => !t.lines()[t.rowOf(ids.b)]?.includes("closed"), 10_000);
    t.ui.unmount();
  });

  it("a row shows the core view's live state, name and model (the live-state contract)", async () => {
    const c = await m.view(ids.a);
    expect(childRow(c)).toMatchObject({ label: short(ids.a), state: "working", active: true });
    const live = {
      state: "waiting-permission" as const,
      since: new Date().toISOString(),
      detail: "Bash: rm -rf ␛[2J",
    };
    const v = childRow({ ...c, live, name: "parser", model: "mock:deep" });
    expect(v).toMatchObject({ label: "parser", state: "waiting-permission", model: "mock:deep" });
    expect(v.activity).toBe("Bash: rm -rf ␛[2J");
    // Child-supplied text is shown, never obeyed: an escape in a name becomes a visible stand-in.
    expect(childRow({ ...c, name: "a\x1b[2Jb" }).label).toBe("a␛[2Jb");
  });

  it("a named child is called by its name in every message, as its row is", async () => {
    const named = (await m.spawn({ agent: "mock", name: "reviewer-n", prompt: "mock: reply=first\nnamed" }))
      .id;
    await m.wait([named], { timeoutMs: 30_000 });
    const t = await open(100, 30);
    const row = () => t.lines().findIndex((l, i) => i >= 2 && l.includes("reviewer-n"));
    await until(() => row() > 0);
    // Its row shows the name, not its agent or id: select it by that.
    const selected = () => (t.ui.lastFrame() ?? "").split("\n").find((l) => l.includes("\x1b[7m")) ?? "";
    for (let i = 0; i < 8 && !selected().includes("reviewer-n"); i++) await t.press("j");
    expect(selected()).toContain("reviewer-n");
    await t.press("v");
    await until(() => t.frame().includes("pane of reviewer-n (Esc closes)"), 10_000);
    await t.press(ESC, "s");
    await until(() => t.frame().includes("send to reviewer-n: "));
    await t.press(..."mock: reply=second", "\r");
    await until(() => /sent to reviewer-n: turn [0-9a-f]{8} queued/.test(t.frame()), 10_000);
    await until(async () => (await m.status(named)).state.completions.size === 2, 30_000);
    await t.press("x");
    await until(() => t.frame().includes(`cancel ${short(named)} (reviewer-n), `));
    await t.press("y");
    await until(() => /cancelled reviewer-n: now closed/.test(t.frame()), 20_000);
    expect(t.frame()).not.toMatch(/(sent to|cancelled|pane of) (mock|[0-9a-f]{8})\b/);
    t.ui.unmount();
  });

  it("the footer shows the tree's budget when one is set (used of the limit), and none without", async () => {
    const none = await open();
    expect(none.frame()).toMatch(/budget none/);
    none.ui.unmount();
    m.setBudget({ tokens: 100_000, turns: 50 });
    try {
      const t = await open(140, 24);
      expect(t.frame()).toMatch(/budget \d+\/100000 tok, \d+\/50 turns/);
      t.ui.unmount();
    } finally {
      m.setBudget(null);
    }
  });
});
