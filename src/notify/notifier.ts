/**
 * A child host's notifier: each event it records is looked at once (notice.ts), and a notice goes to every
 * target that wants it, in the background — never holding up the turn or its delivery. At most a few sends are
 * in flight; beyond that a notice is dropped, saying so in the pane.
 */
import type { MusterEvent } from "../artifacts/events.js";
import { noticeOf } from "./notice.js";
import { type SendOptions, sendNotice } from "./send.js";
import type { NotifyTarget } from "./targets.js";

const MAX_IN_FLIGHT = 16;

export class Notifier {
  private inFlight = 0;
  private readonly seen = new Set<string>();

  constructor(
    private readonly targets: NotifyTarget[],
    private readonly who: { child: string; agent: string },
    private readonly say: (line: string) => void,
    private readonly opts: SendOptions = {},
  ) {}

  /** Looks at one recorded event; sends its notice, if it has one, in the background. */
  consider(e: MusterEvent): void {
    if (this.targets.length === 0 || this.seen.has(e.eventId)) return;
    const notice = noticeOf(e, this.who);
    if (!notice) return;
    this.seen.add(e.eventId);
    for (const t of this.targets) {
      if (t.events && !t.events.includes(notice.event)) continue;
      if (this.inFlight >= MAX_IN_FLIGHT) {
        this.say(`notification to ${t.id} dropped: ${MAX_IN_FLIGHT} are still being sent`);
        continue;
      }
      this.inFlight += 1;
      void sendNotice(t, notice, this.opts)
        .then((r) => {
          if (!r.ok) this.say(`notification to ${t.id} failed after ${r.attempts} tries: ${r.error}`);
        })
        .finally(() => {
          this.inFlight -= 1;
        });
    }
  }
}
