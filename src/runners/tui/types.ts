/**
 * An agent CLI's own interactive TUI as a muster child (`mode: tui`): the child host runs it under a pty
 * proxied to the pane, and learns turn boundaries and answers from the CLI's hooks (never from the screen).
 * One adapter per CLI says how to start it with muster's hooks, and how to read what they report.
 */
import type { ProviderError, Usage } from "../../artifacts/events.js";
import type { TurnInput } from "../types.js";

/** One line of the hook file: what the hook command appended (`hook.ts`). */
export interface HookLine {
  event: string;
  payload: unknown;
}

/** A run an API error ended (quota, rate limit, auth, overloaded, or another): the CLI's words and their kind. */
export interface TuiFailure {
  reason: string;
  providerError?: ProviderError;
}

/** What a hook record means for the host. */
export type TuiSignal =
  /** The TUI is up and its session exists (it can take a prompt). */
  | {
      kind: "ready";
      sessionId?: string;
      transcript?: string;
      /** The TUI takes input only this long after the record (Gemini CLI loading a resumed history drops keys). */
      settleMs?: number;
    }
  /** A prompt was submitted (by muster or typed by a person): a turn starts. */
  | { kind: "start"; sessionId?: string; prompt?: string; transcript?: string }
  /** The TUI asks the person at the pane to allow a tool (its last tool start names which). */
  | { kind: "permission"; sessionId?: string }
  /** A tool call began or ended inside the running turn. */
  | { kind: "tool"; phase: "start" | "end"; name: string; summary: string; sessionId?: string }
  /** The agent ended its turn; `answer` (its last message) and `usage` when the hook carries them. */
  | {
      kind: "stop";
      sessionId?: string;
      answer?: string;
      usage?: Usage;
      transcript?: string;
      /** The run was interrupted in the TUI (a person pressed Escape), not finished. */
      interrupted?: boolean;
      /** An API error ended the run (Claude Code's StopFailure): the turn fails with it. */
      failure?: TuiFailure;
    };

/** How to start the TUI: an argv (never a shell string), its directory and environment. */
export interface TuiLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/** Where the hooks write and how to run the hook command for one event (an argv: node + hook.js + file + event). */
export interface TuiHooks {
  file: string;
  command(event: string): string[];
}

/** A mid-run menu's way out (TuiAdapter.stopChoice). */
export interface StopChoice {
  /** The menu's headline, as the screen shows it. */
  says: string;
  /** The choice taken, as the menu labels it. */
  choice: string;
  keys: string;
}

export interface TuiAdapter {
  /** The runner this adapter belongs to. */
  readonly runner: string;
  /** Which hooks turn boundaries come from (for docs and the pane). */
  readonly hooks: string;
  /** An interrupted turn (Escape) still reports its end (Pi's agent_end); else the TUI is idle a moment after. */
  readonly interruptReportsEnd: boolean;
  /** The keys that interrupt a running turn, each written a moment after the last (default one Escape). */
  readonly interruptKeys?: string[];
  /** Writes the CLI's per-child configuration (in `input.runnerDir`) and says how to start it. */
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch;
  /** A hook record, read. */
  signal(line: HookLine): TuiSignal | undefined;
  /** The turn's answer and usage from the CLI's transcript, read from `fromByte` on (the turn's part). */
  transcript?(file: string, fromByte: number): { answer?: string; usage?: Usage };
  /**
   * Whether the run the transcript holds from `fromByte` on was interrupted in the TUI: for a CLI that reports
   * no end of an interrupted run through its hooks (Claude Code), read while the run goes on.
   */
  interrupted?(file: string, fromByte: number): boolean;
  /**
   * The API error that ended the run the transcript holds from `fromByte` on: for a CLI whose hooks report no
   * end of a failed run (Codex writes it to its rollout only), read while the run goes on.
   */
  failure?(file: string, fromByte: number): TuiFailure | undefined;
  /** A start-up blocker (trust, onboarding, theme, API key) the screen shows: its text, else undefined. */
  dialog(screen: string): string | undefined;
  /**
   * A menu the TUI shows in the middle of a run that only a person would answer and that ends the run either
   * way (a provider's quota menu): what it says, the choice that stops the request, and the keys that make it.
   * muster makes that choice, so the run ends with the provider's error instead of waiting for a person.
   */
  stopChoice?(screen: string): StopChoice | undefined;
  /**
   * Whether the screen shows the TUI idle at its prompt: for a CLI whose ready hook comes only with the first
   * prompt (Codex's SessionStart), the only sign it can take one. Else the ready hook says so.
   */
  readyOnScreen?(screen: string): boolean;
  /** What is known to keep this TUI from becoming ready, said with the progress record of a slow start. */
  readonly slowStart?: string;
  /** The text in the TUI's input box (a draft not yet submitted), else "". */
  draft(screen: string): string;
}
