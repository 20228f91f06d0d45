/**
 * The parts of mode tui's turn taking that are data: how long each wait is, and what one run of the TUI is
 * and what its records add to it (child/tui-turn.ts and tui-submit.ts drive them).
 */

import { SETTINGS } from "../base/settings/resolve.js";
import type { TuiFailure, TuiSignal } from "../runners/tui/types.js";
import type { AgentMessage } from "../runners/types.js";

/** How long a pasted prompt may take to show up as a start hook before the screen is looked at. */
export const SUBMIT_CHECK_MS = 3000;
/** How often the screen of a TUI whose ready hook comes late (Codex) is read until it shows its prompt. */
export const SCREEN_READY_MS = 500;
/** A TUI not ready this long gets a progress record saying so (MUSTER_TUI_SLOW_START_MS overrides it). */
export const SLOW_START_MS: number = SETTINGS.tuiSlowStartMs.default;
/**
 * How long a sent prompt may wait for the TUI to take it (its start, a start-up dialog a person answers in the
 * pane, a run of its own) before the turn ends errored (MUSTER_TUI_READY_TIMEOUT_MS overrides it): a person
 * may have to act, so as long as a permission request waits for one (MUSTER_PERMISSION_TIMEOUT's default).
 */
export const READY_TIMEOUT_MS: number = SETTINGS.tuiReadyTimeoutMs.default;
/**
 * How long the start record may take after muster's Enter (no dialog in the way) before the turn ends
 * errored: a hook that never reports, or a TUI that dropped the prompt, must not hold the child forever. Far
 * past the start hooks seen (seconds), with room for every resubmit (MUSTER_TUI_SUBMIT_TIMEOUT_MS overrides it).
 */
export const SUBMIT_TIMEOUT_MS: number = SETTINGS.tuiSubmitTimeoutMs.default;
/** Enter presses after the first, each only while the draft is still in the input box. */
export const MAX_RESUBMITS = 5;
/** How often a running turn's transcript is checked for an interrupt a person made in the pane or an API error. */
export const INTERRUPT_CHECK_MS = 1000;
/**
 * How long an interrupted TUI may take to be idle again: one that reports the interrupted turn's end (Pi) is
 * waited for up to the longer time (a paste while it still runs would be queued by it, not submitted); one
 * that reports nothing (Claude Code) is given the shorter moment.
 */
export const INTERRUPT_SETTLE_MS = 2000;
/** Between the keys of an interrupt that takes more than one (OpenCode's Escape twice). */
export const INTERRUPT_KEY_GAP_MS = 200;
export const INTERRUPT_REPORT_MS = 30_000;
/** A pause between the paste and its Enter: a TUI reads a burst of keys as more paste. */
export const PASTE_SETTLE_MS = 250;

/** The deadlines of one TUI's waits, read from the child's settings when it starts. */
export interface TuiLimits {
  slowStartMs: number;
  readyMs: number;
  submitMs: number;
}

export const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** What a waiter hears: a hook signal, the TUI's exit, or the turn stopped by the host. */
export type Heard = TuiSignal | { kind: "exit"; why: string } | { kind: "halt" };
export type Waiter = (s: Heard) => void;

/**
 * A run of the TUI, from its start record to its stop record: muster's own (a sent prompt) or one a person
 * typed. Kept as state, not only heard as events: a start and its stop may arrive in one read.
 */
export interface TuiRun {
  start: TuiSignal & { kind: "start" };
  transcriptFrom: number;
  stop?: TuiSignal & { kind: "stop" };
  /** Messages of the run (its tool calls) not yet handed to the turn recording it; `listen` takes them live. */
  pending: AgentMessage[];
  listen?: (m: AgentMessage) => void;
  /** The last tool it started, and the one a person was asked to allow (until it runs or the run ends). */
  tool?: { name: string; summary: string };
  asked?: { name: string; summary: string };
  /** Ended by an interrupt in the pane, with no stop record. */
  interrupted?: boolean;
  /** Ended by an API error its transcript holds, with no stop record. */
  failure?: TuiFailure;
  /** A mid-run menu muster answered with its stop choice (once a run). */
  stopChosen?: boolean;
}

/** A record heard inside a run, kept on it: tool calls and permission asks as its turn's messages, its stop. */
export function heardInRun(run: TuiRun, s: TuiSignal): void {
  if (s.kind === "tool") {
    if (s.phase === "start") run.tool = { name: s.name, summary: s.summary };
    toRun(run, { type: "tool", phase: s.phase, name: s.name, summary: s.summary });
    // The tool ran: a permission the person was asked for was granted.
    if (run.asked && s.phase === "end") closePermission(run, "granted");
  } else if (s.kind === "permission" && !run.asked) {
    run.asked = run.tool ?? { name: "tool", summary: "" };
    const { name, summary } = run.asked;
    toRun(run, { type: "permission", state: "pending", tool: name, ...(summary ? { summary } : {}) });
  } else if (s.kind === "stop") {
    // Asked and never run: the person refused it.
    if (run.asked) closePermission(run, "denied");
    run.stop = s;
  }
}

/** A message of a run: to the turn recording it, or kept until that turn takes the run. */
function toRun(run: TuiRun, m: AgentMessage): void {
  if (run.listen) run.listen(m);
  else run.pending.push(m);
}

function closePermission(run: TuiRun, state: "granted" | "denied"): void {
  const tool = run.asked!.name;
  run.asked = undefined;
  toRun(run, { type: "permission", state, tool });
}
