import { applyEvents, type ChildState, emptyState } from "../core/state.js";
import type { MusterEvent } from "../core/types.js";
import { shortId } from "../util/ids.js";

/** What a progress notification carries (MCP `notifications/progress` params). */
export interface ProgressParams {
  progressToken: string | number;
  progress: number;
  message: string;
}

/** How often a waiting call says something even when its children are quiet (keeps clients' calls alive). */
export const HEARTBEAT_MS = 10_000;

const STATUS_OF: Record<string, string> = {
  turn_queued: "queued",
  turn_held: "paused",
  rate_limited: "rate-limited",
  turn_started: "running",
  runner_started: "running",
  tool_activity: "running",
  progress: "running",
  usage: "running",
  child_exited: "exited",
};

/**
 * Progress of one tool call while it waits: a notification for each new activity of a waited child
 * (`<short id> <status> · <last activity>`), and a heartbeat while nothing happens. A no-op without a token.
 */
export class CallProgress {
  private n = 0;
  private last = "waiting";
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Notifications go out one after another, in order. */
  private sent: Promise<void> = Promise.resolve();
  private readonly states = new Map<string, ChildState>();
  private readonly since = Date.now();

  constructor(
    private readonly token: string | number | undefined,
    private readonly send: (p: ProgressParams) => Promise<void>,
    private readonly heartbeatMs = HEARTBEAT_MS,
  ) {}

  /** Feeds one event of a waited child (history included: only events from this call on are reported). */
  event(id: string, e: MusterEvent): void {
    if (this.token === undefined) return;
    const state = this.states.get(id) ?? emptyState();
    this.states.set(id, state);
    const before = state.lastActivity;
    applyEvents(state, [e]);
    if (state.lastActivity === before || Date.parse(e.ts) < this.since) return;
    const status = e.type === "completion" ? e.status : (STATUS_OF[e.type] ?? "running");
    const text = state.lastActivity?.text ?? "";
    this.say(`${shortId(id)} ${text.startsWith(status) ? text : `${status} · ${text}`}`);
  }

  /** Sends a message now (and restarts the heartbeat). */
  say(message: string): void {
    if (this.token === undefined || this.stopped) return;
    this.last = message;
    this.n += 1;
    const params = { progressToken: this.token, progress: this.n, message };
    this.sent = this.sent.then(() => this.send(params)).catch(() => {});
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.say(this.last), this.heartbeatMs);
    this.timer.unref();
  }

  /** No more notifications for this call; resolves once those already made are sent (so they precede the answer). */
  stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.stopped = true;
    return this.sent;
  }
}
