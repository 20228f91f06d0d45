import { shortId } from "../util/ids.js";
import type { Hidden, TreeRow } from "./tree.js";
import { cellText, textWidth } from "./width.js";

/** A column of the table: its header, width and the order it is given up in on a narrow terminal. */
interface Column {
  key: "name" | "agent" | "host" | "state" | "elapsed" | "turns" | "model" | "tokens" | "cost" | "activity";
  title: string;
  width: number;
  /** Lower keeps its place longer; `activity` takes what is left. */
  drop: number;
}

const COLUMNS: Column[] = [
  { key: "name", title: "NAME", width: 14, drop: 0 },
  { key: "agent", title: "AGENT", width: 8, drop: 4 },
  // Shown only while some child runs elsewhere (an SSH host): a tree on this machine alone has no use for it.
  { key: "host", title: "HOST", width: 10, drop: 3.5 },
  { key: "state", title: "STATE", width: 13, drop: 1 },
  { key: "elapsed", title: "TIME", width: 6, drop: 3 },
  { key: "turns", title: "T", width: 2, drop: 7 },
  { key: "model", title: "MODEL", width: 12, drop: 8 },
  { key: "tokens", title: "TOKENS", width: 6, drop: 5 },
  { key: "cost", title: "COST", width: 6, drop: 6 },
  { key: "activity", title: "ACTIVITY", width: 0, drop: 2 },
];
const MIN_ACTIVITY = 16;

// Every row of every frame asks for the same width's columns: the last answer is kept.
let lastColumns: { width: number; hosts: boolean; columns: readonly Column[] } | undefined;

/**
 * The columns that fit `width`, in display order, with the activity column's width filled in; the host
 * column only with `hosts` (some child runs elsewhere).
 */
export function columnsFor(width: number, hosts = false): readonly Column[] {
  if (lastColumns?.width !== width || lastColumns.hosts !== hosts)
    lastColumns = { width, hosts, columns: fitColumns(width, hosts) };
  return lastColumns.columns;
}

function fitColumns(width: number, hosts: boolean): Column[] {
  const kept = new Set(COLUMNS.map((c) => c.key));
  if (!hosts) kept.delete("host");
  const fixed = () =>
    COLUMNS.filter((c) => kept.has(c.key) && c.key !== "activity").reduce((n, c) => n + c.width + 1, 0);
  const byDrop = [...COLUMNS].sort((a, b) => b.drop - a.drop);
  for (const c of byDrop) {
    if (width - fixed() >= MIN_ACTIVITY || c.key === "name" || c.key === "state") break;
    if (c.key !== "activity") kept.delete(c.key);
  }
  const rest = Math.max(1, width - fixed());
  return COLUMNS.filter((c) => kept.has(c.key)).map((c) =>
    c.key === "activity" ? { ...c, width: rest } : c,
  );
}

/**
 * "45s", "3m12", "2h05", "3d": compact enough for a 6-wide column. `coarse` (a row with nothing running)
 * drops the seconds past the first minute and the minutes past the first hour ("3m", "2h"), so an idle tree
 * is redrawn at most once a minute, and once an hour when it has been idle that long (a frame is tens of ms
 * of ink's work and more of the garbage collector's after it).
 */
export function elapsed(fromIso: string | undefined, now: number, coarse = false): string {
  if (!fromIso) return "-";
  const s = Math.max(0, Math.floor((now - Date.parse(fromIso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600)
    return coarse ? `${Math.floor(s / 60)}m` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}`;
  if (s < 86400)
    return coarse
      ? `${Math.floor(s / 3600)}h`
      : `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}`;
  return `${Math.floor(s / 86400)}d`;
}

export function tokens(n: number | null): string {
  if (n === null) return "-";
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function cost(usd: number | null): string {
  if (usd === null) return "-";
  if (usd === 0) return "$0";
  if (usd < 0.01) return "<$0.01";
  return `$${usd.toFixed(usd < 100 ? 2 : 0)}`;
}

/** A row's time cell: the only part of a frame that moves with the clock alone. */
function rowElapsed(row: TreeRow, now: number): string {
  if (row.kind === "child") return elapsed(row.child.since, now, !row.child.active);
  if (row.kind === "run") return elapsed(row.run.startedAt, now, row.run.settled);
  return "";
}

/**
 * What the clock changes in these rows at `now`: two times with the same text draw the same frame, so a
 * clock tick between them need not redraw (an idle tree shows minutes; ink lays out the whole frame).
 */
export function clockText(rows: TreeRow[], now: number): string {
  return rows.map((r) => rowElapsed(r, now)).join("\n");
}

/** The cells of one row, by column key. */
function cells(row: TreeRow, now: number): Record<Column["key"], string> {
  const indent = "  ".repeat(row.depth);
  if (row.kind === "child") {
    const c = row.child;
    return {
      name: `${indent}${c.label}`,
      agent: c.agent,
      host: c.host || "local",
      state: c.state,
      elapsed: rowElapsed(row, now),
      turns: String(c.turns),
      model: c.model,
      tokens: tokens(c.tokens),
      cost: cost(c.cost),
      activity: c.activity || "-",
    };
  }
  if (row.kind === "run") {
    const r = row.run;
    const settled = r.steps.filter((s) => !["pending", "queued", "running"].includes(s.status)).length;
    const running = r.steps.filter((s) => s.status === "running").length;
    return {
      name: `${indent}run ${shortId(r.id)}`,
      agent: "workflow",
      host: "",
      state: r.status,
      elapsed: rowElapsed(row, now),
      turns: "",
      model: "",
      tokens: "",
      cost: "",
      activity: `${r.workflow}: ${r.steps.length} steps, ${running} running, ${settled} settled`,
    };
  }
  return {
    name: `${indent}${row.step.id}`,
    agent: "step",
    host: "",
    state: row.step.status,
    elapsed: "",
    turns: "",
    model: "",
    tokens: "",
    cost: "",
    activity: row.step.reason ?? (row.step.childId ? `child ${shortId(row.step.childId)}` : "-"),
  };
}

/** One table line of exactly `width` characters. */
export function rowLine(row: TreeRow, width: number, now: number, hosts = false): string {
  const c = cells(row, now);
  return columnsFor(width, hosts)
    .map((col) => cellText(c[col.key], col.width))
    .join(" ");
}

export function headerLine(width: number, hosts = false): string {
  return columnsFor(width, hosts)
    .map((col) => cellText(col.title, col.width))
    .join(" ");
}

export interface Totals {
  children: number;
  active: number;
  tokens: number;
  cost: number | null;
}

/** The footer's facts: what is hidden and why first (it must survive a narrow terminal), then totals and budget. */
export function footerLine(t: Totals, budget: string, hidden: Hidden & { cut: number }): string {
  const why = [
    hidden.settled ? `${hidden.settled} settled` : "",
    hidden.filtered ? `${hidden.filtered} filtered` : "",
    hidden.cut ? `${hidden.cut} cut (scroll)` : "",
  ].filter(Boolean);
  return [
    why.length > 0 ? `hidden: ${why.join(", ")}` : "hidden: none",
    `${t.children} children, ${t.active} working`,
    `tokens ${tokens(t.tokens)}`,
    `cost ${cost(t.cost)}`,
    `budget ${budget}`,
  ].join(" · ");
}

/**
 * One line on the hosts children run on, when any runs elsewhere: each host with its children and how many
 * of them are working (`local` for this machine's). Empty when every child is local.
 */
export function hostsLine(children: readonly { host: string; active: boolean }[]): string {
  if (!children.some((c) => c.host !== "")) return "";
  const by = new Map<string, { n: number; working: number }>();
  for (const c of children) {
    const h = by.get(c.host || "local") ?? { n: 0, working: 0 };
    h.n += 1;
    if (c.active) h.working += 1;
    by.set(c.host || "local", h);
  }
  const parts = [...by].sort(([a], [b]) => (a === "local" ? -1 : b === "local" ? 1 : a.localeCompare(b)));
  return `hosts: ${parts.map(([h, c]) => `${h} ${c.n} (${c.working} working)`).join(" · ")}`;
}

/** The keys of the normal mode, in the order the help lists them. */
export const HELP = [
  "↑↓ select",
  "⏎ expand",
  "v pane",
  "f focus",
  "a attach",
  "s send",
  "x cancel",
  "X subtree",
  "/ filter",
  "H settled",
  "r refresh",
  "q quit",
];

/**
 * The key help wrapped at whole keys into at most `maxLines` lines of `width` cells; what does not fit in
 * them is left off, the last line saying so with "…".
 */
export function helpLines(width: number, maxLines: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const item of HELP) {
    const next = line === "" ? item : `${line} · ${item}`;
    if (line === "" || textWidth(next) <= width) line = next;
    else {
      lines.push(line);
      line = item;
    }
  }
  if (line !== "") lines.push(line);
  if (lines.length <= maxLines) return lines;
  const kept = lines.slice(0, Math.max(1, maxLines));
  const last = kept.length - 1;
  kept[last] = textWidth(`${kept[last]} …`) <= width ? `${kept[last]} …` : cellText(`${kept[last]}…`, width);
  return kept;
}
