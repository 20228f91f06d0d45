/**
 * A start-up dialog of the agent's TUI (trust, API key, onboarding) that keeps a sent prompt from being
 * submitted: read off the screen model, recorded once as a `question` (the child shows `waiting-input` with
 * the dialog's text) and closed (`answered`) once the prompt went through — a person answered it in the pane.
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
}
