import type { CompletionStatus, MusterEvent } from "../artifacts/events.js";
import { SETTINGS, type Settings } from "../base/settings/resolve.js";
import { loadSettings } from "../config/settings.js";

/**
 * A child's live state, derived from its structured events and status only (never from its screen):
 * what a supervisor shows and what a person acts on.
 */
export type LiveStateName =
  | "starting"
  | "working"
  | "waiting-input"
  | "waiting-permission"
  | "queued"
  | "stalled"
  /** A child placed elsewhere whose place does not answer now (its mirror's link is down). */
  | "unreachable"
  /** Settled: the child's host has exited; the outcome of its last turn (or how it closed). */
  | CompletionStatus
  | "closed"
  | "unreadable";

export interface LiveState {
  state: LiveStateName;
  /** When the child entered this state (ISO 8601). */
  since: string;
  /** One line: the current tool and its summary, the progress note, the permission, the stall age. */
  detail?: string;
}

/** What the live derivation keeps from a child's events, folded incrementally (see foldLive). */
export interface LiveFold {
  /** The newest event's time: a turn with no event for the stall limit is stalled. */
  lastTs?: string;
  /** The tool running in the open turn (a start without its end yet). */
  tool?: { name: string; summary: string; ts: string };
  /** The open turn's latest progress note. */
  note?: { text: string; ts: string };
  /** A permission the runner asked for and got no answer to yet. */
  pending?: { tool: string; summary?: string; ts: string };
  /** Permissions refused in the latest turn: once it settles, the child waits for a person to allow them. */
  denied?: { turnId: string; tools: string[]; ts: string };
  /** The latest turn_held: the turn waits because the tree is paused. */
  held?: { turnId: string; ts: string; reason: string; resetAt?: string };
  /** The latest turn_queued: the turn waits for a run slot. */
  queued?: { turnId: string; ts: string; running: number; limit: number };
  /** A question the agent asked its parent (`muster ask`) and is waiting on. */
  asking?: { requestId: string; text: string; ts: string };
  /** The runner its host runs (child_started): a command child makes no model call. */
  runner?: string;
  /** The turn's acceptance check is running on the answer (bounded by its own time limit, so never a stall). */
  verifying?: { command: string; attempt: number; ts: string };
}

/** The stall limit when neither MUSTER_STALL_SECONDS nor the config's stallSeconds sets one. */
export const DEFAULT_STALL_MS = SETTINGS.stallSeconds.default * 1000;

/** The stall limit: env MUSTER_STALL_SECONDS, else config `stallSeconds`, else 60 s (a positive number). */
export const stallMsFrom = (env: NodeJS.ProcessEnv): number => stallMsOf(loadSettings(env).values);

/** The stall limit of settings already resolved. */
export const stallMsOf = (s: Settings): number => Math.round(s.stallSeconds * 1000);

const DETAIL_MAX = 160;

/** One display line: whitespace runs (newlines included) become one space, bounded. */
export function oneLineDetail(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > DETAIL_MAX ? `${flat.slice(0, DETAIL_MAX - 1)}…` : flat;
}

/** Applies one event to the fold (pure apart from mutating `f`); unknown event types only move lastTs. */
export function foldLive(f: LiveFold, e: MusterEvent): void {
  if (typeof e.ts === "string") f.lastTs = e.ts;
  const ev = e;
  switch (ev.type) {
    case "child_started":
      f.runner = ev.runner;
      break;
    case "turn_queued":
      f.queued = { turnId: ev.turnId, ts: ev.ts, running: ev.running, limit: ev.limit };
      break;
    case "turn_held":
      f.held = {
        turnId: ev.turnId,
        ts: ev.ts,
        reason: ev.reason,
        ...(ev.resetAt ? { resetAt: ev.resetAt } : {}),
      };
      break;
    case "rate_limited":
      f.note = { text: `rate limited: running the turn again at ${ev.resetAt}`, ts: ev.ts };
      break;
    case "turn_started":
      if (f.held?.turnId === ev.turnId) f.held = undefined;
      f.tool = undefined;
      f.note = undefined;
      f.pending = undefined;
      f.denied = undefined;
      f.verifying = undefined;
      if (f.queued?.turnId === ev.turnId) f.queued = undefined;
      break;
    case "verify_started":
      f.tool = undefined;
      f.verifying = { command: ev.command, attempt: ev.attempt, ts: ev.ts };
      break;
    case "verify_finished":
      f.verifying = undefined;
      if (ev.retrying)
        f.note = { text: `its check failed (run ${ev.attempt}); the agent is fixing it`, ts: ev.ts };
      break;
    case "tool_activity":
      f.pending = undefined;
      f.tool = ev.phase === "start" ? { name: ev.name, summary: ev.summary, ts: ev.ts } : undefined;
      break;
    case "progress":
      f.note = { text: ev.text, ts: ev.ts };
      break;
    case "usage":
      f.pending = undefined;
      break;
    case "permission":
      if (ev.state === "pending") {
        f.pending = { tool: ev.tool, ...(ev.summary ? { summary: ev.summary } : {}), ts: ev.ts };
        break;
      }
      f.pending = undefined;
      if (ev.state === "denied") {
        const tools = f.denied?.turnId === ev.turnId ? f.denied.tools : [];
        if (!tools.includes(ev.tool)) tools.push(ev.tool);
        f.denied = { turnId: ev.turnId, tools, ts: ev.ts };
      }
      break;
    case "question":
      f.asking = { requestId: ev.requestId, text: ev.text, ts: ev.ts };
      break;
    case "answered":
      if (f.asking?.requestId === ev.requestId) f.asking = undefined;
      break;
    case "completion":
      f.tool = undefined;
      f.pending = undefined;
      f.asking = undefined;
      f.verifying = undefined;
      if (f.queued?.turnId === ev.turnId) f.queued = undefined;
      if (f.held?.turnId === ev.turnId) f.held = undefined;
      break;
  }
}

/** What deriveLive needs of a child besides its fold (a subset of ChildState and LoadedChild). */
export interface LiveInput {
  fold: LiveFold;
  /** Host started (child_started seen and not exited since). */
  hostStarted: boolean;
  startedAt?: string;
  /** The open turn: its id and start time. */
  open?: { turnId: string; startedAt: string };
  exited?: { ts: string; reason: string; detail?: string };
  /** The newest completion. */
  last?: { turnId: string; ts: string; status: CompletionStatus; reason?: string };
  /** Turns requested and not started (inbox), beyond the open one. */
  pending: number;
  /** The child's status is "unreadable" (its files were refused): `detail` says why. */
  unreadable?: string;
  createdAt?: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

const secs = (ms: number): string => `${Math.max(0, Math.floor(ms / 1000))}s`;

/** How an exited child ended: cancelled (a turn was stopped), closed (nothing was running), lost, errored. */
function settled(x: NonNullable<LiveInput["exited"]>): LiveStateName {
  if (x.reason === "lost") return "lost";
  if (x.reason === "cancelled") return "cancelled";
  if (x.reason === "error") return "errored";
  // Closed with no turn to stop (idle, or its workflow step done): the last turn's outcome is in `last`.
  return "closed";
}

/** The live state at `now` (epoch ms); `stallMs`: an open turn with no event for this long is stalled. */
export function deriveLive(c: LiveInput, now: number, stallMs: number = DEFAULT_STALL_MS): LiveState {
  const f = c.fold;
  const withDetail = (state: LiveStateName, since: string, detail?: string): LiveState =>
    detail ? { state, since, detail: oneLineDetail(detail) } : { state, since };
  if (c.unreadable !== undefined) return withDetail("unreadable", c.createdAt ?? iso(now), c.unreadable);
  if (c.exited) {
    const why = c.exited.detail ?? c.last?.reason;
    return withDetail(settled(c.exited), c.exited.ts, why);
  }
  if (!c.hostStarted) return withDetail("starting", c.createdAt ?? f.lastTs ?? iso(now));
  if (c.open) {
    // Waiting on its parent's answer is not a stall: the agent is blocked in `muster ask` on purpose.
    if (f.asking) return withDetail("waiting-input", f.asking.ts, `asks: ${f.asking.text}`);
    if (f.pending) {
      const what = f.pending.summary ? `${f.pending.tool}: ${f.pending.summary}` : f.pending.tool;
      return withDetail("waiting-permission", f.pending.ts, `asks permission for ${what}`);
    }
    if (f.verifying) return withDetail("working", c.open.startedAt, `verifying: ${f.verifying.command}`);
    const lastMs = Date.parse(f.lastTs ?? c.open.startedAt);
    if (now - lastMs >= stallMs) {
      const where = f.tool ? ` (in ${f.tool.name})` : "";
      return withDetail("stalled", iso(lastMs + stallMs), `no event for ${secs(now - lastMs)}${where}`);
    }
    const busy = f.runner === "command" ? "running its command" : "model call";
    const doing = f.tool ? `${f.tool.name} ${f.tool.summary}`.trim() : (f.note?.text ?? busy);
    return withDetail("working", c.open.startedAt, doing);
  }
  if (f.held) {
    const h = f.held;
    return withDetail("queued", h.ts, `paused: ${h.reason}${h.resetAt ? `, until ${h.resetAt}` : ""}`);
  }
  if (f.queued || c.pending > 0) {
    const q = f.queued;
    return q
      ? withDetail("queued", q.ts, `waiting for a run slot (${q.running} of ${q.limit} busy)`)
      : withDetail("queued", c.last?.ts ?? c.startedAt ?? iso(now), "next turn about to start");
  }
  // Idle: nothing waits on a permission any more once the turn settled; a refusal in it is the hint to act on.
  if (c.last && f.denied?.turnId === c.last.turnId) {
    const tools = f.denied.tools.join(", ");
    return withDetail(
      "waiting-input",
      c.last.ts,
      `last turn ${c.last.status}; permission refused for ${tools}: allow it in the profile's tools, then resume`,
    );
  }
  const lastLine = c.last
    ? `last turn ${c.last.status}${c.last.reason ? `: ${c.last.reason}` : ""}`
    : undefined;
  return withDetail("waiting-input", c.last?.ts ?? c.startedAt ?? iso(now), lastLine);
}
