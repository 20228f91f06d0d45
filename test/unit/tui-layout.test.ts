import { describe, expect, it } from "vitest";
import { columnsFor, elapsed, footerLine, HELP, helpLines, rowLine } from "../../src/tui/layout.js";
import { buildTree, windowRows } from "../../src/tui/tree.js";
import type { ChildRow } from "../../src/tui/view.js";
import { cellText, cellTextMiddle, textWidth } from "../../src/tui/width.js";

const child = (id: string, parent: string | null, over: Partial<ChildRow> = {}): ChildRow => ({
  kind: "child",
  id,
  parent,
  label: id,
  agent: "mock",
  state: "working",
  settled: false,
  active: true,
  activity: "",
  since: "2026-01-01T00:00:00.000Z",
  turns: 1,
  model: "m",
  tokens: null,
  cost: null,
  createdAt: "2026-01-01T00:00:00.000Z",
  ...over,
});

describe("top layout", () => {
  it("cuts a path in its middle: its start and its end (a child's id) stay", () => {
    const p = "artifacts /home/someone/.local/state/muster/primaries/p1/artifacts/01a2-child-id";
    const cut = cellTextMiddle(p, 40);
    expect(textWidth(cut)).toBe(40);
    expect(cut.startsWith("artifacts")).toBe(true);
    expect(cut.endsWith("/artifacts/01a2-child-id")).toBe(true);
    expect(cut).toContain("…");
    expect(cellTextMiddle("short", 8)).toBe("short   ");
    for (const n of [1, 2, 5, 9]) expect(textWidth(cellTextMiddle("日本語のパス/の子", n))).toBe(n);
  });

  it("wraps the key help at whole keys: every key within two lines at 80 and 100 columns", () => {
    for (const w of [80, 100]) {
      const lines = helpLines(w, 2);
      expect(lines.length).toBe(2);
      for (const l of lines) expect(textWidth(l)).toBeLessThanOrEqual(w);
      for (const k of HELP) expect(lines.join(" · ")).toContain(k);
    }
    expect(helpLines(200, 2)).toHaveLength(1);
    // Fewer lines than it takes: what is left off is marked, still within the width.
    const one = helpLines(60, 1);
    expect(one).toHaveLength(1);
    expect(one[0]).toMatch(/…$/);
    expect(textWidth(one[0]!)).toBeLessThanOrEqual(60);
  });

  it("fits text to terminal cells: wide characters take two, a cut ends in …", () => {
    expect(cellText("abc", 5)).toBe("abc  ");
    expect(cellText("abcdef", 4)).toBe("abc…");
    expect(textWidth("日本語")).toBe(6);
    for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(textWidth(cellText("日本語ab", n))).toBe(n);
    expect(cellText("日本語", 4)).toBe("日… ");
    expect(textWidth(cellText("👍👍👍", 5))).toBe(5);
  });

  it("gives up columns in order as the terminal narrows; the activity column takes the rest", () => {
    const keys = (w: number) => columnsFor(w).map((c) => c.key);
    expect(keys(140)).toEqual([
      "name",
      "agent",
      "state",
      "elapsed",
      "turns",
      "model",
      "tokens",
      "cost",
      "activity",
    ]);
    expect(keys(80)).not.toContain("model");
    expect(keys(80)).toContain("cost");
    expect(keys(40)).toEqual(["name", "state", "activity"]);
    for (const w of [30, 40, 60, 80, 100, 140]) {
      const total = columnsFor(w).reduce((n, c) => n + c.width + 1, -1);
      expect(total).toBeLessThanOrEqual(w);
      const line = rowLine(
        { kind: "child", key: "a", depth: 3, child: child("a", null), context: false },
        w,
        0,
      );
      expect(textWidth(line)).toBeLessThanOrEqual(w);
    }
  });

  it("elapsed: seconds while running, minutes once idle past the first minute, hours past the first hour", () => {
    const t0 = Date.parse("2026-01-01T00:00:00.000Z");
    const iso = new Date(t0).toISOString();
    expect(elapsed(iso, t0 + 45_000)).toBe("45s");
    expect(elapsed(iso, t0 + 45_000, true)).toBe("45s");
    expect(elapsed(iso, t0 + 192_000)).toBe("3m12");
    expect(elapsed(iso, t0 + 192_000, true)).toBe("3m");
    expect(elapsed(iso, t0 + 7_500_000)).toBe("2h05");
    expect(elapsed(iso, t0 + 7_500_000, true)).toBe("2h");
    // An idle row's text holds for the whole hour: a clock tick within it redraws nothing.
    expect(elapsed(iso, t0 + 7_199_000, true)).toBe("1h");
    expect(elapsed(iso, t0 + 3_600_000, true)).toBe("1h");
    expect(elapsed(iso, t0 + 3 * 86_400_000, true)).toBe("3d");
  });
});

describe("top tree", () => {
  const kids = [
    child("01", null),
    child("02", "01", { settled: true, state: "closed" }),
    child("03", "02", { label: "deep" }),
    child("04", null, { settled: true, state: "lost" }),
    child("05", "gone"),
  ];

  it("nests by parent at any depth; a settled parent of a shown child stays as context; the rest is counted", () => {
    const { rows, hidden } = buildTree(kids, [], { showSettled: false, filter: "" });
    expect(rows.map((r) => `${r.depth}:${r.key}${r.context ? "*" : ""}`)).toEqual([
      "0:01",
      "1:02*",
      "2:03",
      "0:05",
    ]);
    expect(hidden).toEqual({ settled: 1, filtered: 0 });
    const all = buildTree(kids, [], { showSettled: true, filter: "" });
    expect(all.rows).toHaveLength(5);
    expect(all.hidden).toEqual({ settled: 0, filtered: 0 });
  });

  it("filters: matches and their ancestors stay, everything else is counted as filtered", () => {
    const { rows, hidden } = buildTree(kids, [], { showSettled: false, filter: "DEEP" });
    expect(rows.map((r) => `${r.key}${r.context ? "*" : ""}`)).toEqual(["01*", "02*", "03"]);
    expect(hidden).toEqual({ settled: 0, filtered: 2 });
  });

  it("puts a workflow run's steps under it and each step's child under the step", () => {
    const run = {
      kind: "run" as const,
      id: "r1",
      workflow: "review",
      status: "running",
      settled: false,
      steps: [
        { id: "scout", status: "completed", childId: "05" },
        { id: "plan", status: "pending" },
      ],
    };
    const { rows } = buildTree([child("05", null)], [run], { showSettled: true, filter: "" });
    expect(rows.map((r) => `${r.depth}:${r.kind}:${r.key}`)).toEqual([
      "0:run:r1",
      "1:step:r1/scout",
      "2:child:05",
      "1:step:r1/plan",
    ]);
  });

  it("windows rows around the selection and counts the cut ones", () => {
    expect(windowRows(10, 0, 4)).toEqual({ start: 0, end: 4, cut: 6 });
    expect(windowRows(10, 7, 4)).toEqual({ start: 4, end: 8, cut: 6 });
    expect(windowRows(10, 5, 4, 4)).toEqual({ start: 4, end: 8, cut: 6 });
    expect(windowRows(3, 2, 4)).toEqual({ start: 0, end: 3, cut: 0 });
    expect(
      footerLine({ children: 3, active: 1, tokens: 1500, cost: null }, "none", {
        settled: 1,
        filtered: 0,
        cut: 2,
      }),
    ).toBe("hidden: 1 settled, 2 cut (scroll) · 3 children, 1 working · tokens 1.5k · cost - · budget none");
  });
});
