/**
 * What a front end shows of a child, as plain data: JSON-safe objects derived from its loaded state in
 * one place, so the CLI, the MCP server, top and the library render one model of a child, not four.
 */
import type { Caps } from "../artifacts/caps.js";
import type {
  AgentSessionEvent,
  CompletionStatus,
  OutputError,
  OutputRef,
  Usage,
  Verified,
} from "../artifacts/events.js";
import type { RestartPolicy } from "../artifacts/restart.js";
import type { PaneRef } from "../mux/backend.js";
import { shortId } from "../util/ids.js";
import type { LoadedChild, MalformedReport } from "./children.js";
import type { CoreContext } from "./context.js";
import type { LiveState } from "./live-state.js";
import { backendNameOf, placeNameOf } from "./panes.js";
import { lastSnapshot, type SnapshotView } from "./snapshot.js";
import {
  type ChildStatus,
  lastCompletion,
  type QueuedTurn,
  queuedTurns,
  resumable,
  type TurnState,
} from "./state.js";

/** One started turn of a child: how it was asked for and, once settled, how it ended. */
export interface TurnView {
  turnId: string;
  /** 1 = the child's first turn. */
  n: number;
  source: "inbox" | "typed";
  startedAt: string;
  promptBytes: number;
  /** The model it ran with, when its host named one. */
  model?: string;
  status: CompletionStatus | "running";
  durationMs?: number;
  /** Where its answer snapshot is (relative to the artifact dir) and its size. */
  output?: OutputRef;
  outputError?: OutputError;
  /** One line on why it ended so (as recorded: may be empty). */
  reason?: string;
  /** Its answer's acceptance check (`--verify`), for a child that has one. */
  verified?: Verified;
  /** Each time it was started again after its host or agent died, oldest first (its restart policy). */
  restarts?: RestartView[];
}

/** One restart of a turn: why, which attempt of how many, when, and who noticed (a parent, or the host). */
export interface RestartView {
  reason: string;
  attempt: number;
  max: number;
  at: string;
  by: "child" | "parent";
}

/** A settled turn's outcome: the newest completion, also of a turn that never started. */
export interface OutcomeView {
  turnId: string;
  status: CompletionStatus;
  reason?: string;
  output?: OutputRef;
}

/** Everything a front end shows about one child, as plain data. */
export interface ChildView {
  id: string;
  /** The label given at spawn (`--name`), if any. */
  name?: string;
  agent: string;
  runner: string;
  parent: string | null;
  createdAt: string;
  cwd: string;
  status: ChildStatus;
  /** What it is doing now, derived from its events. */
  live: LiveState;
  lastOutcome: OutcomeView | null;
  turns: TurnView[];
  /** Turns asked for and not started yet, in the order they will run. */
  queuedTurns: QueuedTurn[];
  lastActivity: { ts: string; text: string } | null;
  usage: Usage | null;
  resumable: boolean;
  /** The model of its newest turn that named one, else its profile's; null when neither says. */
  model: string | null;
  backend: string;
  place: string;
  /** Its host runs at a place its registry entry names (not this machine): its artifacts are mirrored here. */
  placed: boolean;
  /** Its pane; null before it has one and once it is closed (a closed child's pane is gone). */
  pane: PaneRef | null;
  /** The command that attaches to its pane (`muster attach <short id>`), while it has one. */
  attach: string | null;
  artifactDir: string;
  /** Spans of its events.ndjson that are not records (skipped by every reader). */
  malformed: MalformedReport;
  /** Why its files could not be read (status "unreadable"; nothing but its registry entry is known then). */
  unreadable?: string;
  caps?: Caps;
  /** Its restart policy: a turn lost to a dead host or agent is restarted at most `onLost` times. */
  restart?: RestartPolicy;
  /** The child it was forked from. */
  forkedFrom?: string;
  /** What its agent's live session offers (ACP modes, models), from its newest opening. */
  agentSession?: AgentSessionEvent;
}

export type { MalformedReport, SnapshotView };

/** One child in detail: its view and what takes its backend or one more file to know. */
export interface ChildDetailView extends ChildView {
  /** argv that attaches a terminal to its pane; null without one. */
  attachCommand: string[] | null;
  snapshot?: SnapshotView;
}

/** A started turn as a view. */
export function turnView(t: TurnState): TurnView {
  const done = t.completion;
  return {
    turnId: t.turnId,
    n: t.n,
    source: t.source,
    startedAt: t.startedAt,
    promptBytes: t.promptBytes,
    ...(t.model !== undefined ? { model: t.model } : {}),
    status: done?.status ?? "running",
    ...(done?.durationMs !== undefined ? { durationMs: done.durationMs } : {}),
    ...(done?.output ? { output: done.output } : {}),
    ...(done?.outputError ? { outputError: done.outputError } : {}),
    ...(done?.reason !== undefined ? { reason: done.reason } : {}),
    ...(t.restarts
      ? {
          restarts: t.restarts.map((r) => ({
            reason: r.reason,
            attempt: r.attempt,
            max: r.max,
            at: r.ts,
            by: r.by,
          })),
        }
      : {}),
    ...(done?.verified ? { verified: done.verified } : {}),
  };
}

/** A loaded child as a view (no file read, no probe: what was loaded is what it shows). */
export function childView(c: LoadedChild): ChildView {
  const last = lastCompletion(c.state);
  const pane = c.status === "closed" ? null : c.entry.pane;
  const model = c.state.turns.findLast((t) => t.model !== undefined)?.model ?? c.meta?.profile.model;
  return {
    id: c.entry.id,
    ...(c.name !== undefined ? { name: c.name } : {}),
    agent: c.entry.agent,
    runner: c.entry.runner,
    parent: c.entry.parent,
    createdAt: c.entry.createdAt,
    cwd: c.entry.cwd,
    status: c.status,
    live: c.live,
    lastOutcome: last
      ? {
          turnId: last.turnId,
          status: last.status,
          ...(last.reason !== undefined ? { reason: last.reason } : {}),
          ...(last.output ? { output: last.output } : {}),
        }
      : null,
    turns: c.state.turns.map(turnView),
    queuedTurns: queuedTurns(c.state, c.pending),
    lastActivity: c.state.lastActivity ?? null,
    usage: c.state.usage ?? null,
    resumable: resumable(c.state),
    model: model ?? null,
    backend: backendNameOf(c.entry),
    place: placeNameOf(c.entry),
    placed: c.entry.place !== undefined,
    pane,
    attach: pane ? `muster attach ${shortId(c.entry.id)}` : null,
    artifactDir: c.files.dir,
    malformed: c.malformed,
    ...(c.unreadable !== undefined ? { unreadable: c.unreadable } : {}),
    ...(c.meta?.caps ? { caps: c.meta.caps } : {}),
    ...(c.meta?.restart ? { restart: c.meta.restart } : {}),
    ...(c.meta?.forkedFrom ? { forkedFrom: c.meta.forkedFrom } : {}),
    ...(c.state.agentSession ? { agentSession: c.state.agentSession } : {}),
  };
}

/** A loaded child in detail: its view, the argv that attaches to its pane (from its backend), its snapshot. */
export function detailView(m: Pick<CoreContext, "backendOf">, c: LoadedChild): ChildDetailView {
  const v = childView(c);
  const snapshot = lastSnapshot(c);
  return {
    ...v,
    attachCommand: v.pane ? m.backendOf(c.entry).attachCommand(v.pane) : null,
    ...(snapshot ? { snapshot } : {}),
  };
}
