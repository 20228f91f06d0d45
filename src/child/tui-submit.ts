/**
 * Sending one prompt into the agent's TUI (mode tui): wait until it is idle, paste, press Enter until its start
 * record says it was submitted. Every wait has a deadline: past it, the turn ends with a reason instead of
 * holding the child forever.
 */
import type { EventLog } from "../artifacts/log.js";
import type { TuiAdapter } from "../runners/tui/types.js";
import type { DialogQuestion } from "./tui-dialog.js";
import { SlowStartWatch } from "./tui-dialog.js";
import type { TuiPty } from "./tui-pty.js";
import {
  type Heard,
  MAX_RESUBMITS,
  PASTE_SETTLE_MS,
  SCREEN_READY_MS,
  SUBMIT_CHECK_MS,
  type TuiLimits,
  type TuiRun,
} from "./tui-run.js";
import { mayPaste, notIdleBecause, type TuiEvent, type TuiState, wakeIn } from "./tui-state.js";
import type { TurnControl } from "./turn-control.js";

/** What a submit needs of the holder: the TUI's state, its records as they arrive, and its pty. */
export interface SubmitDeps {
  pty: TuiPty;
  adapter: TuiAdapter;
  turnId: string;
  control: TurnControl;
  log: EventLog;
  dialog: DialogQuestion;
  limits: TuiLimits;
  state(): TuiState;
  step(e: TuiEvent): void;
  /** The first record `want` accepts (the state has taken it by then), the TUI's exit, a halt, or undefined after `ms`. */
  next(want: (s: Heard) => boolean, ms: number): Promise<Heard | undefined>;
  /** The run this submit's paste started, once its start record arrived. */
  taken(): TuiRun | undefined;
}

const secs = (ms: number): string => `${Math.round(ms / 1000)} s`;

/**
 * Pastes the prompt once the TUI is idle and presses Enter until its start hook says it was submitted: Enter
 * again only while the draft is still in the input box (never a second submit). A start-up dialog in the way
 * is reported as a question (`waiting-input`, its text) while the turn keeps waiting for a person to answer it.
 * Resolves with the run it started, a reason it failed (the TUI ended, a deadline passed), or undefined (stopped).
 */
export async function submitPrompt(d: SubmitDeps, prompt: string): Promise<TuiRun | string | undefined> {
  let sent: TuiRun | string | undefined;
  try {
    sent = await pasteAndEnter(d, prompt);
    return sent;
  } finally {
    d.step({ type: "submit-ended" });
    // The turn ends without its prompt taken: its completion closes a dialog's question, so the next asks anew.
    if (!sent || typeof sent === "string") d.dialog.forget();
  }
}

async function pasteAndEnter(d: SubmitDeps, prompt: string): Promise<TuiRun | string | undefined> {
  const { pty, adapter, turnId, limits } = d;
  // One deadline for everything a person may have to clear first (a dialog, a run of their own).
  const readyBy = Date.now() + limits.readyMs;
  const slow = new SlowStartWatch(d.log, limits.slowStartMs);
  let dialogUp = false;
  for (;;) {
    // Idle: the TUI is up (its ready hook) and no turn of its own is running (a person's, or the last one).
    while (!mayPaste(d.state(), Date.now())) {
      const now = Date.now();
      if (now >= readyBy) return notTaken(limits, dialogUp ? DIALOG : notIdleBecause(d.state()));
      // A TUI whose ready shows only on screen (readyOnScreen) is looked at more often than a dialog needs.
      const look = adapter.readyOnScreen ? SCREEN_READY_MS : SUBMIT_CHECK_MS;
      const s = await d.next(
        () => mayPaste(d.state(), Date.now()),
        Math.min(wakeIn(d.state(), now, look), readyBy - now),
      );
      if (stopped(d.control)) return undefined;
      if (s?.kind === "exit") return s.why;
      d.step({ type: "tick", at: Date.now() });
      if (!s && !d.state().up) {
        const screen = await pty.screen();
        dialogUp = d.dialog.report(screen, adapter, turnId);
        if (!dialogUp && adapter.readyOnScreen?.(screen)) d.step({ type: "screen-ready" });
      }
      if (!d.state().up) await slow.check(() => pty.screen(), adapter, turnId);
    }
    if (stopped(d.control)) return undefined;
    d.step({ type: "pasted" });
    pty.write(Buffer.from(`\x1b[200~${prompt}\x1b[201~`, "utf8"));
    await new Promise((r) => setTimeout(r, PASTE_SETTLE_MS));
    // A ready read off the screen is a guess: a dialog drawn after it took the paste (Codex's folder trust
    // drops it), and an Enter now would answer the dialog for the person. Wait for idle again, paste again.
    if (adapter.readyOnScreen && !d.taken() && d.dialog.report(await pty.screen(), adapter, turnId)) {
      d.step({ type: "paste-lost" });
      dialogUp = true;
      continue;
    }
    pty.write(Buffer.from("\r"));
    return await confirm(d, readyBy);
  }
}

/** After the Enter: the run its start record began, or why none came (a deadline, the TUI's exit). */
async function confirm(d: SubmitDeps, readyBy: number): Promise<TuiRun | string | undefined> {
  const { pty, adapter, turnId, limits } = d;
  // The hook's clock runs from the Enter, and again once a dialog that held the prompt is gone.
  let since = Date.now();
  for (let tries = 0; ; ) {
    const left = Math.max(0, since + limits.submitMs - Date.now());
    const s = d.taken()
      ? undefined
      : await d.next((x) => x.kind === "start", Math.min(SUBMIT_CHECK_MS, left));
    if (stopped(d.control)) return undefined;
    if (s?.kind === "exit") return s.why;
    const run = d.taken();
    if (run) {
      d.dialog.answered(turnId);
      return run;
    }
    const screen = await pty.screen();
    if (d.dialog.report(screen, adapter, turnId)) {
      if (Date.now() >= readyBy) return notTaken(limits, DIALOG);
      since = Date.now();
      continue;
    }
    const draft = adapter.draft(screen);
    if (Date.now() - since >= limits.submitMs)
      return `the agent's TUI reported no start of the prompt within ${secs(limits.submitMs)} of its Enter${draft ? " (the prompt is still in its input box)" : ""}`;
    if (draft && tries < MAX_RESUBMITS) {
      tries++;
      pty.write(Buffer.from("\r"));
    }
  }
}

const DIALOG = "a dialog in its pane was not answered (muster attach)";
const notTaken = (limits: TuiLimits, why: string): string =>
  `the agent's TUI did not take the prompt within ${secs(limits.readyMs)}: ${why}`;
const stopped = (control: TurnControl): boolean =>
  control.reason !== undefined || control.failure !== undefined;
