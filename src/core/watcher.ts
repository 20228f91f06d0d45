import * as path from "node:path";
import type { FSWatcher } from "chokidar";
import type { MusterEvent } from "../artifacts/events.js";
import { ChildFeed, type FeedSubscription } from "../artifacts/feed.js";
import type { ChildStore } from "../artifacts/store.js";
import type { Backend } from "../mux/backend.js";
import { isFullId, uuidv7Time } from "../util/ids.js";
import { liveOf } from "./children.js";
import type { CoreContext } from "./context.js";
import type { LiveState } from "./live-state.js";
import { heardWithin, lastHeard, probeChild } from "./liveness.js";
import { onHostDeath } from "./restart.js";
import { applyEvents, type ChildState, emptyState, openTurn } from "./state.js";
import { childStores } from "./stores.js";

export interface WatchOptions {
  /** Called for every event of every child of the primary, in each child's byte order. */
  onEvent: (childId: string, event: MusterEvent) => void;
  onMalformed?: (childId: string, reason: string) => void;
  /** Safety poll of the events files (fs.watch is the fast path); default 2 s, shared with liveness. */
  pollMs?: number;
  /** How often dead hosts are looked for. */
  livenessMs?: number;
  /**
   * Called when a child's live state changes: after its events, and on each liveness tick for changes
   * time alone makes (a turn with no event for the stall limit becomes stalled).
   */
  onLive?: (childId: string, live: LiveState) => void;
  /** Called on each liveness tick (every livenessMs), after the live states were brought up to date. */
  onTick?: () => void;
}

const sameLive = (a: LiveState | undefined, b: LiveState): boolean =>
  a !== undefined && a.state === b.state && a.since === b.since && a.detail === b.detail;

/**
 * The long-lived parent-side watcher of one primary: chokidar discovers new artifact dirs, every child's
 * events come from one feed (fs.watch hint + read-to-EOF; its safety poll is this watcher's tick), and dead
 * hosts become `lost`.
 */
export class PrimaryWatcher {
  private readonly tails = new Map<
    string,
    {
      tail: FeedSubscription;
      state: ChildState;
      store: ChildStore;
      live?: LiveState;
      /** When its host was last heard from (liveness.ts lastHeard). */
      heardAt?: number;
    }
  >();
  // pollMs 0: the tick below pumps every child, so one timer serves the poll and the liveness probe.
  private readonly feed = new ChildFeed({ pollMs: 0 });
  private tick = 0;
  private discovery: FSWatcher | undefined;
  private livenessTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly muster: CoreContext,
    private readonly opts: WatchOptions,
  ) {}

  /** Between two ticks: the safety poll of every tail and the liveness probe. */
  private tickMs(): number {
    return this.opts.livenessMs ?? this.opts.pollMs ?? 2000;
  }

  /** Starts watching; resolves once the children that exist now are attached and read. */
  async start(): Promise<void> {
    const root = childStores(this.muster.paths).root;
    // Loaded here, not at the top: every CLI call imports the core, few of them watch.
    const { watch } = await import("chokidar");
    this.discovery = watch(root, { depth: 0, ignoreInitial: false });
    this.discovery.on("addDir", (dir) => {
      if (path.dirname(dir) === root) this.attach(path.basename(dir));
    });
    this.discovery.on("error", () => {});
    await new Promise<void>((resolve) => this.discovery!.once("ready", () => resolve()));
    const schedule = (): void => {
      if (this.closed) return;
      // One timer for every child: the safety poll of all tails, then the liveness probe.
      this.livenessTimer = setTimeout(() => {
        this.feed.pumpAll();
        for (const id of this.tails.keys()) this.updateLive(id);
        this.opts.onTick?.();
        void this.checkLiveness().finally(schedule);
      }, this.tickMs());
    };
    schedule();
  }

  private attach(id: string): void {
    if (this.closed || this.tails.has(id) || !isFullId(id)) return;
    const state = emptyState();
    const store = childStores(this.muster.paths).child(id);
    const tail = this.feed.subscribe(
      store,
      (events) => {
        const t = this.tails.get(id);
        if (t) t.heardAt = lastHeard(t.heardAt, events);
        applyEvents(state, events);
        for (const e of events) this.opts.onEvent(id, e);
        this.updateLive(id);
      },
      { onMalformed: (m) => this.opts.onMalformed?.(id, `@${m.offset}: ${m.reason}`) },
    );
    this.tails.set(id, { tail, state, store });
    tail.pump();
  }

  /**
   * Children still live per their events get probed; a dead host is settled as `lost` (the tail then
   * reports it). Idle children (no open turn) are probed every third tick: nothing is waiting on them.
   */
  private async checkLiveness(): Promise<void> {
    this.tick += 1;
    let registry: ReturnType<CoreContext["registry"]["read"]> | undefined;
    const interval = this.tickMs();
    for (const [id, { tail, state, store, heardAt }] of this.tails) {
      if (this.closed) return;
      if (state.exited) continue;
      if (state.hostPid !== undefined && !openTurn(state) && this.tick % 3 !== 0) continue;
      // A child whose host wrote within the last tick is alive as far as a probe could tell: a working child
      // (tool events every second or so) costs no /proc read, and one gone quiet is probed on the next tick.
      if (heardWithin(heardAt, interval)) continue;
      // The registry says where the child runs (its backend), so it is read on every probe round.
      registry ??= this.muster.registry.read();
      const entry = registry.children[id];
      let backend: Backend;
      try {
        backend = this.muster.backendOf(entry ?? { pane: null });
      } catch {
        continue; // its backend is not loaded in this process: it cannot be probed from here
      }
      const pane = entry?.pane ?? null;
      const v = await probeChild(
        backend,
        store.dir,
        pane,
        entry?.createdAt ?? new Date().toISOString(),
        state.hostPid,
      ).catch(() => ({ dead: false as const }));
      if (v.dead) {
        await onHostDeath(this.muster, entry, store.dir, v.reason, backend, pane).catch(() => false);
        tail.pump();
      }
    }
  }

  /** A child's live state now (undefined for a child not tailed); the watcher sees no inbox, only events. */
  live(id: string, now = Date.now()): LiveState | undefined {
    const t = this.tails.get(id);
    if (!t) return undefined;
    const createdAt = new Date(uuidv7Time(id)).toISOString();
    const stall = this.muster.stallMs ? { stallMs: this.muster.stallMs } : {};
    return liveOf(t.state, this.pendingTurns(t.store, t.state), { now, createdAt, ...stall });
  }

  /**
   * Turns in the inbox not started yet, read only when it matters (a live host with no open turn): a
   * spawned child between child_started and turn_started is about to work, not waiting for input.
   */
  private pendingTurns(store: ChildStore, s: ChildState): number {
    if (s.exited || s.hostPid === undefined || openTurn(s)) return 0;
    try {
      return store
        .queuedTurns()
        .filter((turnId) => !s.completions.has(turnId) && !s.turns.some((x) => x.turnId === turnId)).length;
    } catch {
      return 0;
    }
  }

  /** Re-derives a child's live state and reports it when it changed. */
  private updateLive(id: string): void {
    const t = this.tails.get(id);
    if (!t || !this.opts.onLive) return;
    const next = this.live(id)!;
    if (sameLive(t.live, next)) return;
    t.live = next;
    this.opts.onLive(id, next);
  }

  /** Children currently tailed. */
  get size(): number {
    return this.tails.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    this.feed.close();
    this.tails.clear();
    await this.discovery?.close();
  }
}

/** Every event of every child of a primary as an async iterator (existing events first); break to stop. */
export async function* eventStream(
  watch: (opts: WatchOptions) => Promise<PrimaryWatcher>,
  opts: { livenessMs?: number } = {},
): AsyncGenerator<{ id: string; event: MusterEvent }> {
  const queue: { id: string; event: MusterEvent }[] = [];
  let wake: (() => void) | undefined;
  const w = await watch({
    onEvent: (id, event) => {
      queue.push({ id, event });
      wake?.();
    },
    ...(opts.livenessMs ? { livenessMs: opts.livenessMs } : {}),
  });
  try {
    for (;;) {
      while (queue.length > 0) yield queue.shift()!;
      await new Promise<void>((r) => {
        wake = r;
      });
      wake = undefined;
    }
  } finally {
    await w.close();
  }
}
