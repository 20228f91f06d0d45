/**
 * What the agent's TUI is doing, as mode tui's holder (child/tui-turn.ts) knows it: one phase, moved only by
 * `tuiStep` from what the holder hears (hook records, the screen, its own keys, the TUI's exit) and from time
 * passing. Pure: the holder does the writing, reading and waiting, and asks this module what may happen next.
 */

/**
 * - closed: no TUI process (none started yet, or it ended).
 * - starting: its process runs, and it has not shown yet that it takes a prompt.
 * - idle: up, and no run going on: a prompt may be pasted.
 * - submitting: muster's paste is in; the next start record is that prompt's.
 * - busy: a run goes on (muster's or one a person typed), until its stop record.
 * - interrupting: muster pressed the TUI's interrupt keys; it counts as busy until a stop record or a moment.
 */
export type TuiPhase = "closed" | "starting" | "idle" | "submitting" | "busy" | "interrupting";

export interface TuiState {
  readonly phase: TuiPhase;
  /** The TUI has shown it takes prompts (its ready record, its prompt on screen); a run's end keeps it so. */
  readonly up: boolean;
  /** When it takes input after its ready record: a paste before that may be dropped. */
  readonly inputAt: number;
  /** Whose run goes on (busy): the start of muster's paste, or one a person typed in the pane. */
  readonly by?: "muster" | "person";
  /** Until when an interrupted TUI counts as busy without a stop record (interrupting). */
  readonly settlesAt?: number;
}

export type TuiEvent =
  /** A new TUI process: nothing of the last one's runs carries over. */
  | { type: "opened" }
  | { type: "exited" }
  /** Its ready record; `settleMs` is how long after it the TUI takes keys. */
  | { type: "ready"; at: number; settleMs?: number }
  /** Its prompt seen on screen: the only sign of a TUI whose ready record comes with the first prompt. */
  | { type: "screen-ready" }
  | { type: "start" }
  | { type: "stop" }
  /** Muster's paste was written. */
  | { type: "pasted" }
  /** A dialog drawn after a ready read off the screen took the paste: the TUI is not up after all. */
  | { type: "paste-lost" }
  /** The submit is over (its start came, it gave up, or the turn was stopped). */
  | { type: "submit-ended" }
  /** Muster pressed the interrupt keys; the TUI is idle again by `settleMs` at the latest. */
  | { type: "interrupt"; at: number; settleMs: number }
  /** A person interrupted the run in the pane, seen only in the transcript (no stop record comes). */
  | { type: "interrupted-in-pane" }
  | { type: "tick"; at: number };

export const TUI_CLOSED: TuiState = { phase: "closed", up: false, inputAt: 0 };

/** Where a run's end leaves the TUI: idle once it was up, else still starting. */
const after = (s: TuiState): TuiState => ({
  phase: s.up ? "idle" : "starting",
  up: s.up,
  inputAt: s.inputAt,
});

/** The state after `e`. */
export function tuiStep(s: TuiState, e: TuiEvent): TuiState {
  if (e.type === "opened") return { phase: "starting", up: false, inputAt: 0 };
  // A record read after the process ended belongs to no TUI there is.
  if (s.phase === "closed") return s;
  switch (e.type) {
    case "exited":
      return TUI_CLOSED;
    case "ready": {
      const up = { ...s, up: true, inputAt: e.at + (e.settleMs ?? 0) };
      return s.phase === "starting" ? { ...up, phase: "idle" } : up;
    }
    case "screen-ready":
      return s.phase === "starting" ? { ...s, phase: "idle", up: true } : { ...s, up: true };
    case "start":
      // A start while muster's paste waits is that paste's; any other was typed by a person.
      return { ...after(s), phase: "busy", by: s.phase === "submitting" ? "muster" : "person" };
    case "stop":
      // A late stop (of a run given up on after an interrupt) does not end muster's submit.
      return s.phase === "busy" || s.phase === "interrupting" ? after(s) : s;
    case "pasted":
      return s.phase === "idle" ? { ...s, phase: "submitting" } : s;
    case "paste-lost":
      return s.phase === "submitting" ? { ...s, phase: "starting", up: false } : s;
    case "submit-ended":
      return s.phase === "submitting" ? after(s) : s;
    case "interrupt":
      return { ...after(s), phase: "interrupting", settlesAt: e.at + e.settleMs };
    case "interrupted-in-pane":
      return s.phase === "busy" ? after(s) : s;
    case "tick":
      return s.phase === "interrupting" && e.at >= (s.settlesAt ?? 0) ? after(s) : s;
  }
}

/** Whether a prompt may be pasted now: the TUI is idle and past its ready record's settle time. */
export const mayPaste = (s: TuiState, now: number): boolean => s.phase === "idle" && now >= s.inputAt;

/** How long a wait for `mayPaste` may sleep before the state can change by time alone (`look` otherwise). */
export function wakeIn(s: TuiState, now: number, look: number): number {
  if (s.phase === "interrupting") return Math.max(0, (s.settlesAt ?? now) - now);
  if (s.phase === "idle") return Math.max(0, s.inputAt - now);
  return look;
}

/** Why a prompt cannot be pasted yet, in words for a reason: what the TUI is still doing. */
export function notIdleBecause(s: TuiState): string {
  switch (s.phase) {
    case "closed":
      return "it ended";
    case "starting":
      return "it never became ready";
    case "busy":
      return s.by === "person" ? "a run typed in its pane was still going" : "its last run never ended";
    case "interrupting":
      return "an interrupted run had not settled";
    case "idle":
    case "submitting":
      return "it was taking a prompt";
  }
}
