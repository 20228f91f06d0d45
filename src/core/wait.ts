import type { MusterEvent } from "../artifacts/events.js";
import { ChildFeed, type FeedSubscription } from "../artifacts/feed.js";
import { sealGroup } from "../delivery/groups.js";
import { appendReceiptsIfWritable } from "../delivery/receipts.js";
import { recordIdOf } from "../delivery/records.js";
import { timerDelay } from "../util/timer-limit.js";
import { type LoadedChild, targetTurn } from "./children.js";
import type { CoreContext } from "./context.js";
import { probeChild, settleDeadHost } from "./liveness.js";
import { type PendingRequest, requestsHolding } from "./requests.js";
import { type TurnResult, toResult } from "./results.js";
import { applyEvents, emptyState, resumable } from "./state.js";

export interface WaitOptions {
  mode?: "all" | "first";
  timeoutMs?: number;
  /** Read each snapshot's text into the result. */
  withText?: boolean;
  /** Called with every event of a waited child as it arrives (progress displays). */
  onEvent?: (id: string, event: MusterEvent) => void;
  /** A specific turn to wait for, per child id (default: each child's newest requested turn). */
  turns?: ReadonlyMap<string, string>;
  /** How often dead hosts are looked for; bounds `lost` detection. */
  livenessMs?: number;
  signal?: AbortSignal;
}

export interface WaitOutcome {
  /** Settled turns, in the order they settled. */
  results: TurnResult[];
  /** Ids still running when the wait ended. */
  pending: string[];
  timedOut: boolean;
  interrupted: boolean;
  /** Why the results could not be marked delivered (the state root cannot be written): they may come again. */
  receiptError?: string;
  /** What the still-running children (or their descendants) wait on: pending questions and permissions. */
  requests?: PendingRequest[];
}

const inInbox = (c: LoadedChild, turnId: string): boolean => c.store.queuedTurns().includes(turnId);

/**
 * Waits for each child's current turn (the newest requested one, unless `turns` names another). Events arrive by fs.watch hint +
 * read-to-EOF (a safety poll covers lost notifications); a liveness probe turns a dead host into `lost`.
 */
export function waitForTurns(
  muster: CoreContext,
  children: LoadedChild[],
  opts: WaitOptions = {},
): Promise<WaitOutcome> {
  const mode = opts.mode ?? "all";
  // Settled turns in settling order; each result is built once the wait ends, so a burst of completions costs
  // a read of each one's new events and nothing more until the last has arrived.
  const settled: (() => TurnResult)[] = [];
  const open = new Map<
    string,
    {
      c: LoadedChild;
      turnId: string | undefined;
      queued: boolean;
      sub?: FeedSubscription;
      /** When its newest event was written: a host that just wrote is alive, and is not probed. */
      heardAt?: number;
    }
  >();
  for (const c of children) {
    if (open.has(c.entry.id)) continue;
    const turnId = opts.turns?.get(c.entry.id) ?? targetTurn(c);
    open.set(c.entry.id, { c, turnId, queued: turnId !== undefined && c.pending.includes(turnId) });
  }

  return new Promise<WaitOutcome>((resolve, reject) => {
    let done = false;
    const timers: NodeJS.Timeout[] = [];
    let probeTimer: NodeJS.Timeout | undefined;
    // Every waited child on one feed: one safety poll timer for all of them.
    const feed = new ChildFeed({ pollMs: 250 });
    const finish = (flags: { timedOut?: boolean; interrupted?: boolean } = {}): void => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      clearTimeout(probeTimer);
      feed.close();
      opts.signal?.removeEventListener("abort", onAbort);
      try {
        resolve({
          results: settled.map((r) => r()),
          pending: [...open.keys()],
          timedOut: !!flags.timedOut,
          interrupted: !!flags.interrupted,
        });
      } catch (e) {
        // A snapshot that fails its integrity check: the wait reports that rather than a result.
        reject(e);
      }
    };
    const onAbort = (): void => finish({ interrupted: true });

    const check = (id: string): void => {
      const o = open.get(id);
      if (!o || done) return;
      const { c, turnId } = o;
      const completion = turnId ? c.state.completions.get(turnId) : undefined;
      if (completion) {
        settle(id, () => toResult(c, completion, !!opts.withText));
      } else if (c.state.exited && !(turnId && (o.queued || inInbox(c, turnId)))) {
        // (A turn still queued after the exit belongs to a resume whose new host is on its way: an exiting host
        // settles every queued turn before it records child_exited.)
        // Exited without settling this turn (e.g. closed while idle with nothing queued).
        const exited = c.state.exited;
        const reason = exited.detail ?? `child exited (${exited.reason})`;
        const result: TurnResult = {
          id,
          agent: c.entry.agent,
          turnId: turnId ?? "",
          status: exited.reason === "lost" ? "lost" : "cancelled",
          reason,
          artifactDir: c.files.dir,
          resumable: resumable(c.state),
        };
        settle(id, () => result);
      }
    };
    const settle = (id: string, r: () => TurnResult): void => {
      open.get(id)?.sub?.close();
      open.delete(id);
      settled.push(r);
      if (mode === "first" || open.size === 0) finish();
    };

    for (const [id, o] of open) {
      o.c = { ...o.c, state: emptyState() };
      o.sub = feed.subscribe(o.c.store, (events) => {
        // By the events' own time: a dead child's old events, read when the wait starts, prove nothing.
        const last = Date.parse(events[events.length - 1]!.ts);
        if (Number.isFinite(last)) o.heardAt = Math.max(o.heardAt ?? 0, last);
        applyEvents(o.c.state, events);
        if (opts.onEvent) for (const e of events) opts.onEvent(id, e);
        check(id);
      });
      o.sub.pump();
      if (done) return;
    }
    if (done) return;

    const probe = async (): Promise<void> => {
      const livenessMs = opts.livenessMs ?? 1000;
      for (const [, o] of [...open]) {
        if (done) return;
        if (o.heardAt !== undefined && Date.now() - o.heardAt < livenessMs) continue;
        // A child whose backend is not loaded here cannot be proven dead: it is only waited for.
        const backend = (() => {
          try {
            return muster.backendOf(o.c.entry);
          } catch {
            return undefined;
          }
        })();
        if (!backend) continue;
        const v = await probeChild(
          backend,
          o.c.files.dir,
          o.c.entry.pane,
          o.c.entry.createdAt,
          o.c.state.hostPid,
        ).catch(() => ({ dead: false as const }));
        if (v.dead) {
          await settleDeadHost(o.c.files.dir, v.reason, backend.host, o.c.entry.pane).catch(() => false);
          o.sub?.pump();
        }
      }
      if (!done) probeTimer = setTimeout(() => void probe(), livenessMs);
    };
    probeTimer = setTimeout(() => void probe(), Math.min(opts.livenessMs ?? 1000, 500));
    if (opts.timeoutMs !== undefined)
      timers.push(setTimeout(() => finish({ timedOut: true }), timerDelay(opts.timeoutMs)));
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * waitForTurns, then: the results handed back consume their delivery records (they will not show in the
 * inbox again), and a wait that ends before a child settled says what holds it up, if it is an answer only
 * a parent can give.
 */
export async function waitDelivering(
  m: CoreContext,
  children: LoadedChild[],
  opts: WaitOptions,
): Promise<WaitOutcome> {
  const outcome = await waitForTurns(m, children, opts);
  const receiptError = appendReceiptsIfWritable(
    m.paths.receipts,
    outcome.results.map((r) => recordIdOf(r.id, r.turnId)),
    "wait",
  );
  const waitingOn = requestsHolding(m, outcome.pending);
  return {
    ...outcome,
    ...(receiptError ? { receiptError } : {}),
    ...(waitingOn.length > 0 ? { requests: waitingOn } : {}),
  };
}

/**
 * Waits for an explicit group: awaiting it seals it, so its members are then all there is, and it is
 * delivered whole (every member settled). `onMembers` hears who that is before the wait starts.
 */
export async function waitForGroup(
  m: CoreContext & { children(ids: readonly string[]): LoadedChild[] },
  groupId: string,
  opts: Omit<WaitOptions, "mode"> & { onMembers?: (ids: string[]) => void },
): Promise<WaitOutcome> {
  const { onMembers, ...rest } = opts;
  const members = m.children((await sealGroup(m.paths.groups, groupId)).members.map((mb) => mb.id));
  onMembers?.(members.map((c) => c.entry.id));
  return waitDelivering(m, members, { ...rest, mode: "all" });
}
