import type {
  AgentSessionEvent,
  ChildExitedEvent,
  CompletionEvent,
  MusterEvent,
  PermissionEvent,
  QuestionEvent,
  RestartedEvent,
  Usage,
} from "../artifacts/events.js";
import { foldLive, type LiveFold } from "./live-state.js";

export interface TurnState {
  turnId: string;
  n: number;
  /** The seq of its turn_started record: turns are ordered by it (arrival), never by their ids. */
  seq: number;
  source: "inbox" | "typed";
  startedAt: string;
  promptBytes: number;
  /** The model it runs with, when its host named one (turn_started). */
  model?: string;
  runnerPid?: number;
  /** Each time it was started again after its host or agent died (restart policy), oldest first. */
  restarts?: RestartedEvent[];
  completion?: CompletionEvent;
}

/** Lifecycle of a child as its events tell it; "unreadable" when its files are refused (see loadChildOrUnreadable). */
export type ChildStatus = "starting" | "queued" | "running" | "idle" | "closed" | "lost" | "unreadable";

/** A child's state folded from its events (the registry only says where it is). */
export interface ChildState {
  hostPid?: number;
  startedAt?: string;
  turns: TurnState[];
  /** Completions by turnId, including parent-written ones for turns that never started. */
  completions: Map<string, CompletionEvent>;
  exited?: ChildExitedEvent;
  /** The turn waiting for a run slot (turn_queued seen, turn_started not yet). */
  queued?: string;
  lastActivity?: { ts: string; text: string };
  usage?: Usage;
  /** What the agent's live session offers (ACP modes, models), from its latest opening. */
  agentSession?: AgentSessionEvent;
  lastSeq: number;
  /** What the live state is derived from (see live-state.ts). */
  live: LiveFold;
  /**
   * Its questions and permission requests nobody has answered yet, oldest first: folded here so a listing
   * of pending requests (the inbox, every update of `muster web`) reads no child's whole log for them.
   */
  requests: (QuestionEvent | PermissionEvent)[];
}

export const emptyState = (): ChildState => ({
  turns: [],
  completions: new Map(),
  lastSeq: 0,
  live: {},
  requests: [],
});

const activity = (e: MusterEvent): string | undefined => {
  switch (e.type) {
    case "turn_started":
      return `turn started (${e.promptBytes} bytes)`;
    case "turn_queued":
      return `queued: ${e.running} of ${e.limit} run slots busy`;
    case "turn_held":
      return `paused: ${e.reason}${e.resetAt ? `, until ${e.resetAt}` : ""}`;
    case "rate_limited":
      return `rate limited until ${e.resetAt}: ${e.reason}`;
    case "tool_activity":
      return `${e.phase === "start" ? "⚙" : "✓"} ${e.name} ${e.summary}`.trim();
    case "progress":
      return e.text;
    case "question":
      return `asks: ${e.text}`;
    case "completion":
      return e.reason ? `${e.status}: ${e.reason}` : e.status;
    case "restarted":
      return `restarted (${e.attempt} of ${e.max}): ${e.reason}`;
    case "child_exited":
      return `exited (${e.reason})`;
    case "worktree_setup":
      return "worktree set up";
    default:
      return undefined;
  }
};

/** Applies events in byte order; unknown types are ignored (forward compatibility). */
export function applyEvents(state: ChildState, events: MusterEvent[]): ChildState {
  for (const e of events) {
    if (typeof e.seq === "number" && e.seq > state.lastSeq) state.lastSeq = e.seq;
    const text = activity(e);
    if (text) state.lastActivity = { ts: e.ts, text };
    foldLive(state.live, e);
    // A request stays open until answered or granted/denied, its turn settles, or the host exits.
    switch (e.type) {
      case "question":
      case "permission": {
        if (!e.requestId) break;
        const at = state.requests.findIndex((q) => q.requestId === e.requestId);
        const open = e.type === "question" || e.state === "pending";
        if (open && at >= 0) state.requests[at] = e;
        else if (open) state.requests.push(e);
        else if (at >= 0) state.requests.splice(at, 1);
        break;
      }
      case "answered":
        state.requests = state.requests.filter((q) => q.requestId !== e.requestId);
        break;
      case "completion":
        state.requests = state.requests.filter((q) => q.turnId !== e.turnId);
        break;
      case "child_exited":
        state.requests = [];
        break;
    }
    switch (e.type) {
      case "child_started":
        // A resumed child gets a new host after the old one exited: it is live again.
        state.hostPid = e.pid;
        state.startedAt = e.ts;
        state.exited = undefined;
        break;
      case "turn_queued":
        state.queued = e.turnId;
        break;
      case "turn_started": {
        if (state.queued === e.turnId) state.queued = undefined;
        // A restarted turn starts again under its own id: the same turn, started anew (its number stays).
        const again = state.turns.find((x) => x.turnId === e.turnId && !x.completion);
        if (again) {
          Object.assign(again, { seq: e.seq, startedAt: e.ts, promptBytes: e.promptBytes });
          delete again.runnerPid;
          if (e.model) again.model = e.model;
          break;
        }
        state.turns.push({
          turnId: e.turnId,
          n: state.turns.length + 1,
          seq: e.seq,
          source: e.source,
          startedAt: e.ts,
          promptBytes: e.promptBytes,
          ...(e.model ? { model: e.model } : {}),
        });
        break;
      }
      case "restarted": {
        const t = state.turns.find((x) => x.turnId === e.turnId);
        if (t) t.restarts = [...(t.restarts ?? []), e];
        break;
      }
      case "runner_started": {
        const t = state.turns.find((x) => x.turnId === e.turnId);
        if (t) t.runnerPid = e.pid;
        break;
      }
      case "agent_session":
        state.agentSession = e;
        break;
      case "usage":
        state.usage = {
          input: (state.usage?.input ?? 0) + e.usage.input,
          output: (state.usage?.output ?? 0) + e.usage.output,
          ...(e.usage.cost !== undefined || state.usage?.cost !== undefined
            ? { cost: (state.usage?.cost ?? 0) + (e.usage.cost ?? 0) }
            : {}),
        };
        break;
      case "completion": {
        state.completions.set(e.turnId, e);
        const t = state.turns.find((x) => x.turnId === e.turnId);
        if (t) t.completion = e;
        break;
      }
      case "child_exited":
        state.exited = e;
        break;
    }
  }
  return state;
}

/** The turn still running, if any. */
export const openTurn = (s: ChildState): TurnState | undefined => s.turns.find((t) => !t.completion);

/**
 * The one status every surface shows (ls, status, MCP). `running` means a turn holds a run slot: a host
 * records turn_started only after it got one, so a turn still in the inbox is `queued` — waiting for a
 * slot (turn_queued) or about to ask for one — and the count of `running` children never exceeds the bound.
 */
export function childStatus(s: ChildState, pendingInbox: number): ChildStatus {
  if (s.exited) return s.exited.reason === "lost" ? "lost" : "closed";
  if (s.hostPid === undefined) return "starting";
  if (openTurn(s)) return "running";
  if (pendingInbox > 0) return "queued";
  return "idle";
}

/** A requested turn that has not started yet, in the order it will run. */
export interface QueuedTurn {
  /** 1 = next to start. */
  position: number;
  turnId: string;
  /** What it waits for: the child host to start, a run slot, or the turns ahead of it. */
  waitingFor: "host" | "slot" | "turn";
}

/**
 * The child's queue: turns in its inbox not started yet (`pending`, oldest first), the one waiting for
 * a run slot (turn_queued) included. The first of them waits for a slot when no turn is running.
 */
export function queuedTurns(s: ChildState, pending: string[]): QueuedTurn[] {
  const running = openTurn(s) !== undefined;
  return pending.map((turnId, i) => ({
    position: i + 1,
    turnId,
    waitingFor:
      s.hostPid === undefined ? "host" : s.queued === turnId || (i === 0 && !running) ? "slot" : "turn",
  }));
}

/** The last settled turn's completion. */
export function lastCompletion(s: ChildState): CompletionEvent | undefined {
  let last: CompletionEvent | undefined;
  for (const c of s.completions.values()) if (!last || c.seq > last.seq) last = c;
  return last;
}

/**
 * Resumable once some turn completed with a result. The conversation's assistant message is written
 * before its completion event, so the events answer this without reading the conversation file.
 */
export function resumable(s: ChildState): boolean {
  for (const c of s.completions.values()) if (c.status === "completed" && c.by === "child") return true;
  return false;
}
