import type { AgentMessage } from "../runners/types.js";

// Free text inside one event record stays far below the 1 MiB record limit.
const MAX_EVENT_TEXT = 8 * 1024;
export const boundText = (s: string, max = MAX_EVENT_TEXT): string =>
  s.length > max ? `${s.slice(0, max - 1)}…` : s;

/** Why a turn is being stopped from outside. */
export type StopReason = "cancelled" | "interrupted" | "lost" | "steered" | "stopped" | "exhausted";

/** Stops that end only the turn: the agent's process (a live session) stays for the next one. */
export const TURN_ONLY_STOPS: readonly StopReason[] = ["interrupted", "steered", "stopped"];

/** Lets the host stop the running turn (signals arrive outside the turn's own flow). */
export class TurnControl {
  reason: StopReason | undefined;
  /** A record of the turn that could not be written (a full disk): the turn stops and settles errored. */
  failure: Error | undefined;
  /** An explicit result from `muster done|error` inside the pane; wins over the runner's own. */
  explicit: { status: "completed" | "errored"; text: string } | undefined;
  /** Which cap ended the turn (reason "exhausted"), one line. */
  capReason: string | undefined;
  /** Each message from the agent, after it was recorded (the cap guard counts and clocks them). */
  onMessage: ((m: AgentMessage) => void) | undefined;
  private stopper: (() => void) | undefined;

  constructor(
    readonly turnId: string,
    /** How a failure reads as the turn's reason (the host names a full disk). */
    private readonly worded: (e: Error) => Error = (e) => e,
  ) {}

  /** Called once the agent has exited, before the outcome is decided (late `muster done` requests land here). */
  beforeDecide: (() => void) | undefined;

  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.stopper?.();
  }

  /** A cap is reached: the turn ends exhausted, naming it. */
  exhaust(why: string): void {
    if (this.reason) return;
    this.capReason = why;
    this.stop("exhausted");
  }

  /** The turn cannot be recorded as it goes: the first failure is kept, and the runner is stopped. */
  fail(e: Error): void {
    if (this.failure) return;
    this.failure = this.worded(e);
    this.stopper?.();
  }

  onStop(fn: () => void): void {
    this.stopper = fn;
    if (this.reason || this.failure) fn();
  }
}
