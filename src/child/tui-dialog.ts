/**
 * What the agent's TUI shows while it does not take a sent prompt yet, read off the screen model. A start-up
 * dialog (trust, API key, onboarding) is recorded once as a `question` (the child shows `waiting-input` with
 * the dialog's text) and closed (`answered`) once the prompt went through — a person answered it in the pane.
 * A TUI slow to become ready gets one `progress` record with what its screen shows.
 */
import type { EventLog } from "../artifacts/log.js";
import type { TuiAdapter } from "../runners/tui/types.js";
import { uuidv7 } from "../util/ids.js";

export class DialogQuestion {
  private asked: string | undefined;

  constructor(private readonly log: EventLog) {}

  /** Whether the screen shows a dialog (recorded as a question the first time). */
  report(screen: string, adapter: TuiAdapter, turnId: string): boolean {
    const text = adapter.dialog(screen);
    if (!text) return false;
    if (!this.asked) {
      this.asked = uuidv7();
      this.log.append({
        type: "question",
        turnId,
        requestId: this.asked,
        text: `the agent's TUI waits on a dialog in its pane (muster attach): ${text}`.slice(0, 1000),
      });
    }
    return true;
  }

  /** The prompt went through: a dialog reported before was answered in the pane. */
  answered(turnId: string): void {
    if (!this.asked) return;
    this.log.append({
      type: "answered",
      turnId,
      requestId: this.asked,
      outcome: "answered",
      text: "answered in the pane",
    });
    this.asked = undefined;
  }

  /** The turn that asked ended without its prompt taken: its completion closed the question. */
  forget(): void {
    this.asked = undefined;
  }
}

/** Watches one wait for the TUI to be ready: past the limit, one progress record (status shows it) says so. */
export class SlowStartWatch {
  private readonly since = Date.now();
  private told = false;

  constructor(
    private readonly log: EventLog,
    private readonly limitMs: number,
  ) {}

  async check(screen: () => Promise<string>, adapter: TuiAdapter, turnId: string): Promise<void> {
    const ms = Date.now() - this.since;
    if (this.told || ms < this.limitMs) return;
    this.told = true;
    const shown = (await screen())
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-3)
      .join(" / ")
      .slice(0, 300);
    // The pane is the TUI's (the host's own lines are muted there): the record is where it shows.
    this.log.append({
      type: "progress",
      turnId,
      text: `the agent's TUI is not ready after ${Math.round(ms / 1000)} s (its screen: ${shown || "blank"})${adapter.slowStart ? `; ${adapter.slowStart}` : ""}`,
    });
  }
}
