import type { LoadedChild } from "../core/children.js";
import { openTurn } from "../core/state.js";
import { shortId } from "../util/ids.js";
import { visibleLine } from "../util/sanitize.js";

/**
 * What the core's list/status may carry beyond LoadedChild: the live state derived from events and a
 * child's name (both optional, so top works with a core that has them and one that does not yet).
 */
export interface LiveFields {
  live?: { state: string; since: string; detail?: string };
  name?: string;
}
export type TopChildInput = LoadedChild & LiveFields;

/** One child as top shows it: plain data, already made safe for a terminal. */
export interface ChildView {
  kind: "child";
  id: string;
  parent: string | null;
  label: string;
  agent: string;
  state: string;
  /** Settled: closed, lost or unreadable (hidden by default unless something under it is shown). */
  settled: boolean;
  /** A turn is running (drives the once-a-second clock). */
  active: boolean;
  activity: string;
  /** ISO time the elapsed column counts from: the running turn's start, else the child's creation. */
  since: string;
  turns: number;
  model: string;
  tokens: number | null;
  cost: number | null;
  createdAt: string;
}

const SETTLED = new Set(["closed", "lost", "unreadable"]);

/** A child's row data; `model` is what its latest turn ran with (from its turn_started events). */
export function childView(c: TopChildInput, model: string | undefined): ChildView {
  const open = openTurn(c.state);
  const act = c.live?.detail ?? c.unreadable ?? c.state.lastActivity?.text ?? "";
  const usage = c.state.usage;
  return {
    kind: "child",
    id: c.entry.id,
    parent: c.entry.parent,
    label: visibleLine(c.name ?? (c.entry as { name?: string }).name ?? shortId(c.entry.id)),
    agent: visibleLine(c.entry.agent),
    state: visibleLine(c.live?.state ?? c.status),
    settled: SETTLED.has(c.status),
    active: open !== undefined,
    activity: visibleLine(act),
    since: open?.startedAt ?? c.entry.createdAt,
    turns: c.state.turns.length,
    model: visibleLine(model ?? c.meta?.profile.model ?? "-"),
    tokens: usage ? usage.input + usage.output : null,
    cost: usage?.cost ?? null,
    createdAt: c.entry.createdAt,
  };
}

/** A workflow run and its steps, as top shows them. */
export interface RunView {
  kind: "run";
  id: string;
  workflow: string;
  status: string;
  settled: boolean;
  startedAt?: string;
  steps: { id: string; status: string; childId?: string; reason?: string }[];
}
