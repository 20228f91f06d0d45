import * as path from "node:path";
import { type FSWatcher, watch } from "chokidar";
import type { MusterEvent } from "../artifacts/events.js";
import { childFiles } from "../artifacts/layout.js";
import { EventTail } from "../artifacts/tail.js";
import { isFullId } from "../util/ids.js";
import { probeChild, settleFromParent } from "./liveness.js";
import type { Muster } from "./muster.js";
import { applyEvents, type ChildState, emptyState } from "./state.js";

export interface WatchOptions {
  /** Called for every event of every child of the primary, in each child's byte order. */
  onEvent: (childId: string, event: MusterEvent) => void;
  onMalformed?: (childId: string, reason: string) => void;
  /** Safety poll of each events file (fs.watch is the fast path). */
  pollMs?: number;
  /** How often dead hosts are looked for. */
  livenessMs?: number;
}

/**
 * The long-lived parent-side watcher of one primary: chokidar discovers new artifact dirs,
 * each child's events are tailed by fs.watch hint + read-to-EOF, and dead hosts become `lost`.
 */
export class PrimaryWatcher {
  private readonly tails = new Map<string, { tail: EventTail; state: ChildState }>();
  private discovery: FSWatcher | undefined;
  private livenessTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly muster: Muster,
    private readonly opts: WatchOptions,
  ) {}

  /** Starts watching; resolves once the children that exist now are attached and read. */
  async start(): Promise<void> {
    const root = this.muster.paths.artifacts;
    this.discovery = watch(root, { depth: 0, ignoreInitial: false });
    this.discovery.on("addDir", (dir) => {
      if (path.dirname(dir) === root) this.attach(path.basename(dir));
    });
    this.discovery.on("error", () => {});
    await new Promise<void>((resolve) => this.discovery!.once("ready", () => resolve()));
    const schedule = (): void => {
      if (this.closed) return;
      this.livenessTimer = setTimeout(
        () => void this.checkLiveness().finally(schedule),
        this.opts.livenessMs ?? 2000,
      );
    };
    schedule();
  }

  private attach(id: string): void {
    if (this.closed || this.tails.has(id) || !isFullId(id)) return;
    const state = emptyState();
    const tail = new EventTail(
      childFiles(this.muster.paths.artifactDir(id)).events,
      (events) => {
        applyEvents(state, events);
        for (const e of events) this.opts.onEvent(id, e);
      },
      {
        pollMs: this.opts.pollMs ?? 2000,
        onMalformed: (m) => this.opts.onMalformed?.(id, `@${m.offset}: ${m.reason}`),
      },
    );
    this.tails.set(id, { tail, state });
    tail.pump();
  }

  /** Children still live per their events get probed; a dead host is settled as `lost` (the tail then reports it). */
  private async checkLiveness(): Promise<void> {
    let registry: ReturnType<Muster["registry"]["read"]> | undefined;
    for (const [id, { tail, state }] of this.tails) {
      if (this.closed) return;
      if (state.exited) continue;
      if (state.hostPid === undefined) registry ??= this.muster.registry.read();
      const entry = registry?.children[id];
      const v = await probeChild(
        this.muster.backend,
        this.muster.paths.artifactDir(id),
        entry?.pane ?? null,
        entry?.createdAt ?? new Date().toISOString(),
        state.hostPid,
      ).catch(() => ({ dead: false as const }));
      if (v.dead) {
        await settleFromParent(this.muster.paths.artifactDir(id), "lost", v.reason).catch(() => false);
        tail.pump();
      }
    }
  }

  /** Children currently tailed. */
  get size(): number {
    return this.tails.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.livenessTimer) clearTimeout(this.livenessTimer);
    for (const { tail } of this.tails.values()) tail.close();
    this.tails.clear();
    await this.discovery?.close();
  }
}
