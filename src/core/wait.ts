import type { MusterEvent } from "../artifacts/events.js";
import { ChildFeed, type FeedSubscription } from "../artifacts/feed.js";
import { loadSettings } from "../config/settings.js";
import { sealGroup } from "../delivery/groups.js";
import { appendReceiptsIfWritable } from "../delivery/receipts.js";
import { recordIdOf } from "../delivery/records.js";
import { timerDelay } from "../util/timer-limit.js";
import { type LoadedChild, targetTurn } from "./children.js";
import type { CoreContext } from "./context.js";
import { heardWithin, lastHeard, probeChild } from "./liveness.js";
import { type PendingRequest, requestsHolding } from "./requests.js";
import { onHostDeath } from "./restart.js";
import { type TurnResult, toResult } from "./results.js";
import { applyEvents, emptyState, resumable } from "./state.js";
import { pauseNotice, type TreePauseView } from "./tree-pause.js";

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
  /**
   * The tree is paused (a provider refused a turn of it: quota, credential): no new turn starts until
   * `resume-tree`. Carried once per pause, by the first wait that ends while it holds.
   */
  treePaused?: TreePauseView;
}

const inInbox = (c: LoadedChild, turnId: string): boolean => c.store.queuedTurns().includes(turnId);

/** A waited child whose turn has not settled yet. */
interface OpenTurn {
  c: LoadedChild;
  turnId: string | undefined;
  queued: boolean;
  sub?: FeedSubscription;
  /** When its newest event was written: a host that just wrote is alive, and is not probed. */
  heardAt?: number;
}

type Settled = () => TurnResult;

/**
 * Waits for each child's current turn (the newest requested one, unless `turns` names another). Events arrive by fs.watch hint +
 * read-to-EOF (a safety poll covers lost notifications); a liveness probe turns a dead host into `lost`.
 */
export function waitForTurns(
  muster: CoreContext,
  children: LoadedChild[],
  opts: WaitOptions = {},
): Promise<WaitOutcome> {
  const open = openTurns(children, opts.turns);
  return new Promise<WaitOutcome>((resolve, reject) => {
    new TurnWait(muster, open, opts, resolve, reject).start();
  });
}

/** Each child once, with the turn it is waited for and whether that turn was still queued at the start. */
function openTurns(children: LoadedChild[], turns: WaitOptions["turns"]): Map<string, OpenTurn> {
  const open = new Map<string, OpenTurn>();
  for (const c of children) {
    if (open.has(c.entry.id)) continue;
    const turnId = turns?.get(c.entry.id) ?? targetTurn(c);
    open.set(c.entry.id, { c, turnId, queued: turnId !== undefined && c.pending.includes(turnId) });
  }
  return open;
}

/** One wait in progress: its children's feed, its timers, and the turns settled so far. */
class TurnWait {
  private readonly mode: "all" | "first";
  private done = false;
  // Settled turns in settling order; each result is built once the wait ends, so a burst of completions costs
  // a read of each one's new events and nothing more until the last has arrived.
  private readonly settled: Settled[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private probeTimer: NodeJS.Timeout | undefined;
  // Every waited child on one feed: one safety poll timer for all of them.
  private readonly feed = new ChildFeed({ pollMs: 250 });
  private readonly onAbort = (): void => this.finish({ interrupted: true });
  private readonly unreachableMs: number;

  constructor(
    private readonly muster: CoreContext,
    private readonly open: Map<string, OpenTurn>,
    private readonly opts: WaitOptions,
    private readonly resolve: (outcome: WaitOutcome) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.mode = opts.mode ?? "all";
    this.unreachableMs = loadSettings(muster.env).values.unreachableSeconds * 1000;
  }

  /** Reads what each child wrote so far (the wait may end right there), then arms the probe, timeout and abort. */
  start(): void {
    for (const [id, o] of this.open) {
      this.follow(id, o);
      if (this.done) return;
    }
    if (this.done) return;
    const livenessMs = this.opts.livenessMs ?? 1000;
    this.probeTimer = setTimeout(() => void this.probe(), Math.min(livenessMs, 500));
    if (this.opts.timeoutMs !== undefined)
      this.timers.push(setTimeout(() => this.finish({ timedOut: true }), timerDelay(this.opts.timeoutMs)));
    if (this.opts.signal?.aborted) this.onAbort();
    else this.opts.signal?.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Folds a child's events from the start of its log into a fresh state, checking its turn after each read. */
  private follow(id: string, o: OpenTurn): void {
    o.c = { ...o.c, state: emptyState() };
    o.sub = this.feed.subscribe(o.c.store, (events) => {
      o.heardAt = lastHeard(o.heardAt, events);
      applyEvents(o.c.state, events);
      if (this.opts.onEvent) for (const e of events) this.opts.onEvent(id, e);
      this.check(id);
    });
    o.sub.pump();
  }

  private check(id: string): void {
    const o = this.open.get(id);
    if (!o || this.done) return;
    const result = settledResult(id, o, !!this.opts.withText);
    if (result) this.settle(id, result);
  }

  private settle(id: string, r: Settled): void {
    this.open.get(id)?.sub?.close();
    this.open.delete(id);
    this.settled.push(r);
    if (this.mode === "first" || this.open.size === 0) this.finish();
  }

  /** Looks for dead hosts among the children not heard from lately; a dead one's log gets `lost`. */
  private async probe(): Promise<void> {
    const livenessMs = this.opts.livenessMs ?? 1000;
    for (const [id, o] of [...this.open]) {
      if (this.done) return;
      if (this.givenUp(id, o)) continue;
      if (heardWithin(o.heardAt, livenessMs)) continue;
      await this.probeOne(o);
    }
    if (!this.done) this.probeTimer = setTimeout(() => void this.probe(), livenessMs);
  }

  /**
   * A child whose place has not answered for the bound (its mirror's link down that long) is given up: it
   * settles `lost` for this wait only, saying why; nothing is recorded, and its real result stays pending.
   */
  private givenUp(id: string, o: OpenTurn): boolean {
    const down = o.c.store.linkDown?.();
    if (!down || o.c.state.exited) return false;
    const forMs = Date.now() - Date.parse(down.since);
    if (!(forMs >= this.unreachableMs)) return false;
    const { c, turnId } = o;
    const result: TurnResult = {
      id,
      agent: c.entry.agent,
      turnId: turnId ?? "",
      status: "lost",
      reason: `${c.entry.place ?? "its place"} has not answered for ${Math.round(forMs / 1000)} s (${down.why}); the child may still be running there, and its result is delivered when the place answers again`,
      artifactDir: c.files.dir,
      resumable: resumable(c.state),
      unreachable: true,
    };
    this.settle(id, () => result);
    return true;
  }

  private async probeOne(o: OpenTurn): Promise<void> {
    // A child whose backend is not loaded here cannot be proven dead: it is only waited for.
    const backend = (() => {
      try {
        return this.muster.backendOf(o.c.entry);
      } catch {
        return undefined;
      }
    })();
    if (!backend) return;
    const { c } = o;
    const v = await probeChild(backend, c.files.dir, c.entry.pane, c.entry.createdAt, c.state.hostPid).catch(
      () => ({ dead: false as const }),
    );
    if (v.dead) {
      await onHostDeath(this.muster, c.entry, c.files.dir, v.reason, backend, c.entry.pane).catch(
        () => false,
      );
      o.sub?.pump();
    }
  }

  private finish(flags: { timedOut?: boolean; interrupted?: boolean } = {}): void {
    if (this.done) return;
    this.done = true;
    for (const t of this.timers) clearTimeout(t);
    clearTimeout(this.probeTimer);
    this.feed.close();
    this.opts.signal?.removeEventListener("abort", this.onAbort);
    try {
      this.resolve({
        results: this.settled.map((r) => r()),
        pending: [...this.open.keys()],
        timedOut: !!flags.timedOut,
        interrupted: !!flags.interrupted,
      });
    } catch (e) {
      // A snapshot that fails its integrity check: the wait reports that rather than a result.
      this.reject(e);
    }
  }
}

/** The waited turn's result once it has settled (its completion, or its host's exit without one), else undefined. */
function settledResult(id: string, o: OpenTurn, withText: boolean): Settled | undefined {
  const { c, turnId } = o;
  const completion = turnId ? c.state.completions.get(turnId) : undefined;
  if (completion) return () => toResult(c, completion, withText);
  // (A turn still queued after the exit belongs to a resume whose new host is on its way: an exiting host
  // settles every queued turn before it records child_exited.)
  if (!c.state.exited || (turnId && (o.queued || inInbox(c, turnId)))) return undefined;
  // Exited without settling this turn (e.g. closed while idle with nothing queued).
  const exited = c.state.exited;
  const result: TurnResult = {
    id,
    agent: c.entry.agent,
    turnId: turnId ?? "",
    status: exited.reason === "lost" ? "lost" : "cancelled",
    reason: exited.detail ?? `child exited (${exited.reason})`,
    artifactDir: c.files.dir,
    resumable: resumable(c.state),
  };
  return () => result;
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
    outcome.results.filter((r) => !r.unreachable).map((r) => recordIdOf(r.id, r.turnId)),
    "wait",
  );
  const waitingOn = requestsHolding(m, outcome.pending);
  const paused = pauseNotice(m, "wait");
  return {
    ...outcome,
    ...(receiptError ? { receiptError } : {}),
    ...(waitingOn.length > 0 ? { requests: waitingOn } : {}),
    ...(paused ? { treePaused: paused } : {}),
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
