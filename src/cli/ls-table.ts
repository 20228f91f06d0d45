import type { LoadedChild } from "../core/children.js";
import { lastCompletion } from "../core/state.js";
import { shortId } from "../util/ids.js";
import { clip, since, table } from "./format.js";
import { visibleLine } from "./sanitize.js";

/** States whose detail says what the child does now (the others show its last activity). */
const ACTIVE_STATES = new Set(["working", "stalled", "waiting-permission", "queued"]);

/** The ACTIVITY cell of `ls`: what it does now (active states), else its last activity, one line. */
export function activityCell(c: LoadedChild, now = Date.now()): string {
  if (c.unreadable !== undefined) return visibleLine(c.unreadable);
  if (ACTIVE_STATES.has(c.live.state) && c.live.detail)
    return `${since(c.live.since, now)} · ${clip(visibleLine(c.live.detail), 60)}`;
  const act = c.state.lastActivity;
  return act ? `${since(act.ts, now)} ago · ${clip(visibleLine(act.text), 60)}` : "-";
}

/** The `ls` table (a NAME column only when some child has a name, PRIMARY with --all). */
export function lsTable(
  groups: { primary: string; children: LoadedChild[] }[],
  thisPrimary: string,
  all: boolean,
  now = Date.now(),
): string {
  const named = groups.some((g) => g.children.some((c) => c.name !== undefined));
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
    for (const c of g.children) {
      rows.push([
        shortId(c.entry.id),
        ...(named ? [c.name ?? "-"] : []),
        c.entry.agent,
        c.live.state,
        lastCompletion(c.state)?.status ?? "-",
        String(c.state.turns.length),
        since(c.entry.createdAt, now),
        activityCell(c, now),
        ...(all ? [g.primary === thisPrimary ? `${shortId(g.primary)} (this)` : shortId(g.primary)] : []),
      ]);
    }
  }
  return table(rows);
}
