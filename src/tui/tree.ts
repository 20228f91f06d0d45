import type { ChildRow, RunView } from "./view.js";

/** One selectable row of the tree, in display order. */
export type TreeRow =
  | { kind: "child"; key: string; depth: number; child: ChildRow; context: boolean }
  | { kind: "run"; key: string; depth: number; run: RunView; context: boolean }
  | {
      kind: "step";
      key: string;
      depth: number;
      run: RunView;
      step: RunView["steps"][number];
      context: boolean;
    };

export interface TreeOptions {
  /** Show settled children and runs too (default: hidden, and counted). */
  showSettled: boolean;
  /** Case-insensitive text every shown row (or one of its descendants) contains. */
  filter: string;
}

/** Rows left out and why: hiding is never silent, the footer shows these. */
export interface Hidden {
  settled: number;
  filtered: number;
}

interface Node {
  row: TreeRow;
  /** The row on its own would be hidden: "settled", "filtered", or null when it is shown for itself. */
  hide: "settled" | "filtered" | null;
  kids: Node[];
}

const RUN_SETTLED = new Set(["completed", "failed", "cancelled", "interrupted"]);
export const runSettled = (status: string): boolean => RUN_SETTLED.has(status);

const matches = (filter: string, ...fields: (string | undefined)[]): boolean => {
  if (filter === "") return true;
  const f = filter.toLowerCase();
  return fields.some((x) => x?.toLowerCase().includes(f));
};

/**
 * The tree primary → children → grandchildren (any depth, by the registry's parent links), then the
 * workflow runs with their steps and each step's child (and its subtree) under it. A row hidden on its
 * own (settled, or not matching the filter) stays as context while something under it is shown.
 */
export function buildTree(
  children: ChildRow[],
  runs: RunView[],
  opts: TreeOptions,
): { rows: TreeRow[]; hidden: Hidden } {
  const byId = new Map(children.map((c) => [c.id, c]));
  const kidsOf = new Map<string | null, ChildRow[]>();
  const stepChild = new Set(
    runs.flatMap((r) => r.steps.map((s) => s.childId).filter((x) => x !== undefined)),
  );
  for (const c of [...children].sort((a, b) => a.id.localeCompare(b.id))) {
    // A child whose parent is unknown here (removed, or of another primary) is shown at the top.
    const parent = c.parent !== null && byId.has(c.parent) ? c.parent : null;
    if (parent === null && stepChild.has(c.id)) continue; // shown under its workflow step
    kidsOf.set(parent, [...(kidsOf.get(parent) ?? []), c]);
  }
  const hideOf = (settled: boolean, ...fields: (string | undefined)[]): Node["hide"] =>
    !matches(opts.filter, ...fields) ? "filtered" : settled && !opts.showSettled ? "settled" : null;

  const seen = new Set<string>();
  const childNode = (c: ChildRow, depth: number): Node => {
    seen.add(c.id);
    const kids = (kidsOf.get(c.id) ?? []).filter((k) => !seen.has(k.id)).map((k) => childNode(k, depth + 1));
    const hide = hideOf(c.settled, c.label, c.id, c.agent, c.state, c.activity, c.model);
    return { row: { kind: "child", key: c.id, depth, child: c, context: false }, hide, kids };
  };
  const runNode = (r: RunView): Node => {
    const settled = runSettled(r.status);
    const kids = r.steps.map((s): Node => {
      const child = s.childId ? byId.get(s.childId) : undefined;
      return {
        row: { kind: "step", key: `${r.id}/${s.id}`, depth: 1, run: r, step: s, context: false },
        hide: hideOf(settled || child?.settled === true, s.id, s.status, s.reason),
        kids: child && !seen.has(child.id) ? [childNode(child, 2)] : [],
      };
    });
    return {
      row: { kind: "run", key: r.id, depth: 0, run: r, context: false },
      hide: hideOf(settled, r.workflow, r.id, r.status),
      kids,
    };
  };
  const roots = [...(kidsOf.get(null) ?? []).map((c) => childNode(c, 0)), ...runs.map(runNode)];

  const rows: TreeRow[] = [];
  const hidden: Hidden = { settled: 0, filtered: 0 };
  const walk = (n: Node): void => {
    const at = rows.length;
    for (const k of n.kids) walk(k);
    const anyBelow = rows.length > at;
    if (n.hide === null || anyBelow) {
      rows.splice(at, 0, { ...n.row, context: n.hide !== null } as TreeRow);
    } else {
      hidden[n.hide] += 1;
    }
  };
  for (const r of roots) walk(r);
  return { rows, hidden };
}

/** Which rows fit: a window of `height` rows that keeps `selected` in view, and how many were cut. */
export function windowRows(
  count: number,
  selected: number,
  height: number,
  previousStart = 0,
): { start: number; end: number; cut: number } {
  const h = Math.max(1, height);
  if (count <= h) return { start: 0, end: count, cut: 0 };
  let start = Math.min(Math.max(0, previousStart), count - h);
  if (selected < start) start = selected;
  if (selected >= start + h) start = selected - h + 1;
  return { start, end: start + h, cut: count - h };
}
