/**
 * The spare holder: a holder is a Node process whose start would delay every child, so one is started ahead
 * of a spawn (when the core first asks the backend's version, and after each later spawn) and handed the next
 * spawn's spec. A spare leaves when its starter exits (its stdin closes) or after its idle time unused.
 */
import * as fs from "node:fs";
import { hostAlive } from "../../util/proc.js";
import type { Holder } from "./holder-launch.js";

/** After a spawn, the next spare starts this much later: the new child's own start goes first. */
const REPLENISH_DELAY_MS = 100;

/** At most one spare holder, started by `startHolder`, for the spawns of one backend. */
export class SparePool {
  private spare: Holder | null = null;
  private taken = 0;

  constructor(private readonly startHolder: () => Holder) {}

  /** Starts a spare holder unless one waits already (best effort: a spawn starts its own without one). */
  prestart(): void {
    if (this.spare) return;
    try {
      const h = this.startHolder();
      this.spare = h;
      h.proc.once("exit", () => {
        // A spare that died unused (a used one's folder is its pane's, kept for exit.json and screen.txt).
        if (this.spare !== h) return;
        this.spare = null;
        fs.rmSync(h.dir, { recursive: true, force: true });
      });
    } catch {
      this.spare = null;
    }
  }

  /** The holder for a spawn: the spare if it still lives, else a new one. */
  take(): Holder {
    // A spare that died while it waited (killed, or its idle time ran out) is dropped, never retried
    // after the spec went out: a holder that failed later may have started the program already.
    let spare = this.spare;
    this.spare = null;
    if (spare && (spare.exited || !spare.proc.pid || !hostAlive(spare.proc.pid, spare.dir))) {
      fs.rmSync(spare.dir, { recursive: true, force: true });
      spare = null;
    }
    this.taken += 1;
    return spare ?? this.startHolder();
  }

  /** After a spawn took its holder: a process that spawns again and again (a server, a workflow) keeps the next one warm. */
  replenish(): void {
    if (this.taken > 1) setTimeout(() => this.prestart(), REPLENISH_DELAY_MS).unref();
  }

  /** Ends the spare holder, if one waits (for a process that goes on living without spawning). */
  close(): void {
    const h = this.spare;
    this.spare = null;
    if (h && !h.exited) h.proc.stdin?.end();
  }
}
