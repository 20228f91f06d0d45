import type { ChildView } from "../core/views.js";
import { shortId } from "../util/ids.js";
import { clip, since, table } from "./format.js";
import { visibleLine } from "./sanitize.js";

/** States whose detail says what the child does now (the others show its last activity). */
const ACTIVE_STATES = new Set(["working", "stalled", "waiting-permission", "queued"]);

/** The ACTIVITY cell of `ls`: what it does now (active states), else its last activity, one line. */
export function activityCell(v: ChildView, now = Date.now()): string {
  if (v.unreadable !== undefined) return visibleLine(v.unreadable);
  if (ACTIVE_STATES.has(v.live.state) && v.live.detail)
    return `${since(v.live.since, now)} · ${clip(visibleLine(v.live.detail), 60)}`;
  const act = v.lastActivity;
  return act ? `${since(act.ts, now)} ago · ${clip(visibleLine(act.text), 60)}` : "-";
}

/** The `ls` table (a NAME column only when some child has a name, PRIMARY with --all). */
export function lsTable(
  groups: { primary: string; children: ChildView[] }[],
  thisPrimary: string,
  all: boolean,
  now = Date.now(),
): string {
  const named = groups.some((g) => g.children.some((v) => v.name !== undefined));
  const rows = [
    [
      "ID",
      ...(named ? ["NAME"] : []),
      "AGENT",
      "STATE",
      "LAST",
      "TURNS",
      "AGE",
      "ACTIVITY",
      ...(all ? ["PRIMARY"] : []),
    ],
  ];
  for (const g of groups) {
    for (const v of g.children) {
      rows.push([
        shortId(v.id),
        ...(named ? [v.name ?? "-"] : []),
        v.agent,
        v.live.state,
        v.lastOutcome?.status ?? "-",
        String(v.turns.length),
        since(v.createdAt, now),
        activityCell(v, now),
        ...(all ? [g.primary === thisPrimary ? `${shortId(g.primary)} (this)` : shortId(g.primary)] : []),
      ]);
    }
  }
  return table(rows);
}
