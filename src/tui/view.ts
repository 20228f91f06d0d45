import type { ChildView } from "../core/views.js";
import { shortId } from "../util/ids.js";
import { visibleLine } from "../util/sanitize.js";

/** One child as top shows it: plain data, already made safe for a terminal. */
export interface ChildRow {
  kind: "child";
  id: string;
  parent: string | null;
  label: string;
  agent: string;
  /** Where its host runs: "" on this machine, else the host (`h1` of `ssh:h1`) or the place's name. */
  host: string;
  state: string;
  /** Settled: closed, lost or unreadable (hidden by default unless something under it is shown). */
  settled: boolean;
  /** A turn is running (drives the once-a-second clock). */
  active: boolean;
  activity: string;
  /** ISO time the elapsed column counts from: the running turn's start, else the child's creation. */
  since: string;
  turns: number;
  /** Restarts of its newest turn (its restart policy): shown as ↻N beside its state. */
  restarts: number;
  model: string;
  tokens: number | null;
  cost: number | null;
  createdAt: string;
}

const SETTLED = new Set(["closed", "lost", "unreadable"]);

/**
 * Where a child runs, in a word: the host of `ssh:h1`, `container` for a child in a container of its own (one
 * per child: its id would only repeat the row's), else the place's name.
 */
export const hostLabel = (place: string): string =>
  place.startsWith("ssh:") ? place.slice(4) : place.startsWith("container:") ? "container" : place;

/** A child's row, from the core's view of it. */
export function childRow(v: ChildView): ChildRow {
  const open = v.turns.find((t) => t.status === "running");
  // A failed check's own words go first: the column is cut at its width, and the reason after it is longer.
  const evidence = open ? "" : checkEvidence(v);
  const act = [
    evidence && `check failed: ${evidence}`,
    v.live.detail ?? v.unreadable ?? v.lastActivity?.text ?? "",
  ]
    .filter(Boolean)
    .join(" · ");
  const restarts = v.turns.at(-1)?.restarts?.length ?? 0;
  return {
    kind: "child",
    id: v.id,
    parent: v.parent,
    label: visibleLine(v.name ?? shortId(v.id)),
    agent: visibleLine(v.agent),
    host: v.placed ? visibleLine(hostLabel(v.place)) : "",
    state: visibleLine(restarts > 0 ? `${v.live.state} ↻${restarts}` : v.live.state),
    settled: SETTLED.has(v.status),
    active: open !== undefined,
    activity: visibleLine(act),
    since: open?.startedAt ?? v.createdAt,
    turns: v.turns.length,
    restarts,
    model: visibleLine(v.model ?? "-"),
    tokens: v.usage ? v.usage.input + v.usage.output : null,
    cost: v.usage?.cost ?? null,
    createdAt: v.createdAt,
  };
}

/** The last turn failed its acceptance check: the last line its check printed, where the reason stops short. */
function checkEvidence(v: ChildView): string {
  const last = v.turns.at(-1);
  if (last?.status !== "failed_verification" || !last.verified) return "";
  return (
    last.verified.outputTail
      .split("\n")
      .map((l) => l.trim())
      .findLast(Boolean) ?? ""
  );
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
