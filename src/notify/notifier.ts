/**
 * A notifier of one child's events: each is looked at once (notice.ts), and a notice goes to every target that
 * wants it, in the background — never holding up the turn or its delivery. At most a few sends are in flight;
 * beyond that a notice is dropped, saying so (the host in its pane, a place's keeper in the mirror's log). A
 * local child's host has one; a far child's is its place's keeper's, on this machine (place/mirror/keeper.ts).
 */
import type { MusterEvent } from "../artifacts/events.js";
import { sendDetached } from "./detached.js";
import { noticeOf } from "./notice.js";
import { type SendOptions, sendNotice } from "./send.js";
import { type NotifyTarget, wants } from "./targets.js";

const MAX_IN_FLIGHT = 16;

// Every send of this process still under way: a process about to end lets them finish (each is bounded).
const sending = new Set<Promise<void>>();

/** Resolves once every notice this process is sending has been sent or given up on. */
export async function noticesSettled(): Promise<void> {
  // A send's backoff timer does not hold the process up (send.ts); waiting for it here must.
  const hold = setInterval(() => {}, 60_000);
  try {
    while (sending.size > 0) await Promise.all([...sending]);
  } finally {
    clearInterval(hold);
  }
}

export class Notifier {
  private inFlight = 0;
  private readonly seen = new Set<string>();
  /** Set once this process is about to end: notices go from a process of their own (detached.ts). */
  private handedOff: { env: NodeJS.ProcessEnv; logFile: string } | undefined;

  constructor(
    private readonly targets: NotifyTarget[],
    private readonly who: { child: string; agent: string },
    private readonly say: (line: string) => void,
    private readonly opts: SendOptions = {},
  ) {}

  /**
   * This process ends right after its next records (a host recording its own end): their notices are sent by
   * a process of their own, which an exit does not cut short; `logFile` gets a line for a target that failed.
   */
  handOff(env: NodeJS.ProcessEnv, logFile: string): void {
    this.handedOff = { env, logFile };
  }

  /** Looks at one recorded event; sends its notice, if it has one, in the background. */
  consider(e: MusterEvent): void {
    if (this.targets.length === 0 || this.seen.has(e.eventId)) return;
    const notice = noticeOf(e, this.who);
    if (!notice) return;
    this.seen.add(e.eventId);
    if (this.handedOff) {
      sendDetached(notice, this.handedOff.env, this.handedOff.logFile);
      return;
    }
    for (const t of this.targets) {
      if (!wants(t, notice.event)) continue;
      if (this.inFlight >= MAX_IN_FLIGHT) {
        this.say(`notification to ${t.id} dropped: ${MAX_IN_FLIGHT} are still being sent`);
        continue;
      }
      this.inFlight += 1;
      const sent: Promise<void> = sendNotice(t, notice, this.opts)
        .then((r) => {
          if (!r.ok) this.say(`notification to ${t.id} failed after ${r.attempts} tries: ${r.error}`);
        })
        .finally(() => {
          this.inFlight -= 1;
          sending.delete(sent);
        });
      sending.add(sent);
    }
  }
}
