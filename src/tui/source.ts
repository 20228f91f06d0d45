import * as fs from "node:fs";
import { LiveViews } from "../core/live-views.js";
import type { Muster } from "../core/muster.js";
import type { ChildView } from "../core/views.js";
import type { PrimaryWatcher } from "../core/watcher.js";
import { formatUsd } from "../util/cost.js";
import { listRuns } from "../workflows/run-log.js";
import { runSettled } from "./tree.js";
import { type ChildRow, childRow, type RunView } from "./view.js";

/** Everything one frame of top shows, read from the core. */
export interface Snapshot {
  primary: string;
  children: ChildRow[];
  /** The core's view of each child the rows show (what a row's details are built from). */
  views: ChildView[];
  runs: RunView[];
  budget: string;
  at: number;
}

export interface SourceOptions {
  /** At most one update per this many ms while events stream in (default: see frameMs). */
  minIntervalMs?: number;
  /** While a turn runs, re-read the core's list at least this often, for time-derived states such as stalled (default 20 s). */
  fullEveryMs?: number;
  /** How often the clock looks at an idle tree's times (default 30 s; it redraws only what reads differently). */
  idleClockMs?: number;
  /** Liveness probe period handed to the core watcher (default: the watcher's own 2 s). */
  livenessMs?: number;
}

/** "$1.20/$5.00, 3000/10000 tok, 4/10 turns" (used of the limit), or "none" when the tree has no budget. */
function budgetText(m: Muster): string {
  // The report reads every child's events: not at all when no budget is set.
  if (!fs.existsSync(m.paths.budget)) return "none";
  const { budget, used, exhausted } = m.budget();
  if (!budget) return "none";
  const parts = [];
  if (budget.cost !== undefined) parts.push(`${formatUsd(used.cost)}/${formatUsd(budget.cost)}`);
  if (budget.tokens !== undefined) parts.push(`${used.tokens}/${budget.tokens} tok`);
  if (budget.turns !== undefined) parts.push(`${used.turns}/${budget.turns} turns`);
  return `${parts.join(", ") || "set"}${exhausted ? " EXHAUSTED" : ""}`;
}

// The budget report reads every child's events: it is re-read at most this often.
const BUDGET_MS = 30_000;

const runView = (r: ReturnType<typeof listRuns>[number]): RunView => ({
  kind: "run",
  id: r.runId,
  workflow: r.workflow,
  status: r.status,
  settled: runSettled(r.status),
  ...(r.startedAt ? { startedAt: r.startedAt } : {}),
  steps: r.steps.map((s) => ({
    id: s.id,
    status: s.status,
    ...(s.childId ? { childId: s.childId } : {}),
    ...(s.reason ? { reason: s.reason } : {}),
  })),
});

/**
 * top's view of one primary, kept current by the core's watcher: each event is folded into the core's
 * views as it arrives (LiveViews), so an update reads no file. The core's list (what ls shows: registry
 * entries, inbox, liveness, the live state and name) is read whole at start, on `r` and every fullEveryMs
 * while a turn runs; when a child appears or changes status, only that child is read again. Never on a
 * polling loop of its own.
 */
export class TopSource {
  private watcher: PrimaryWatcher | undefined;
  private readonly views: LiveViews;
  private runs: RunView[] = [];
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again: boolean | undefined;
  private lastUpdate = 0;
  private lastFull = 0;
  private budget = { text: "none", at: Number.NEGATIVE_INFINITY };
  private closed = false;
  private listener: ((s: Snapshot) => void) | undefined;
  last: Snapshot | undefined;

  constructor(
    readonly muster: Muster,
    private readonly opts: SourceOptions = {},
  ) {
    this.views = new LiveViews(muster);
  }

  /** Starts the watcher and delivers the first snapshot before resolving. */
  async start(onSnapshot: (s: Snapshot) => void): Promise<void> {
    this.listener = onSnapshot;
    this.watcher = await this.muster.watch({
      onEvent: (id, e) => {
        this.views.apply(id, e);
        this.schedule();
      },
      ...(this.opts.livenessMs ? { livenessMs: this.opts.livenessMs } : {}),
    });
    await this.refresh(true);
  }

  /** Updates now; `full` re-reads the core's list (the `r` key), else only what events changed. */
  async refresh(full = false): Promise<void> {
    if (this.loading) {
      this.again = (this.again ?? false) || full;
      return this.loading;
    }
    this.loading = this.update(full).finally(() => {
      this.loading = undefined;
      const again = this.again;
      this.again = undefined;
      if (again !== undefined && !this.closed) void this.refresh(again);
    });
    return this.loading;
  }

  /**
   * How often the screen may change: once a second, every 2 s while more than 16 turns run (a frame costs
   * ink ~10 ms here; 64 busy children would otherwise cost more than the watcher they come from).
   */
  frameMs(): number {
    if (this.opts.minIntervalMs !== undefined) return this.opts.minIntervalMs;
    return (this.last?.children.filter((c) => c.active).length ?? 0) > 16 ? 2000 : 1000;
  }

  /** The clock period of a tree with no turn running: its rows show minutes. */
  idleClockMs(): number {
    return this.opts.idleClockMs ?? 30_000;
  }

  /** An update soon: coalesces bursts of events, at most one per frameMs. */
  schedule(): void {
    if (this.closed || this.timer) return;
    const wait = Math.max(30, this.lastUpdate + this.frameMs() - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, wait);
  }

  /** Whether a full re-read is due: time-derived states (stalled) change without an event. */
  due(now: number): boolean {
    const active = this.last?.children.some((c) => c.active) ?? false;
    return active && now - this.lastFull >= (this.opts.fullEveryMs ?? 20_000);
  }

  private budgetNow(full: boolean): string {
    const now = Date.now();
    if (full || now - this.budget.at >= BUDGET_MS) this.budget = { text: budgetText(this.muster), at: now };
    // The tree's pause is one small file: read each time, so a pause or a resume-tree shows at once.
    const paused = this.muster.treePause();
    return paused
      ? `${this.budget.text} · TREE PAUSED (${paused.kind}): muster resume-tree`
      : this.budget.text;
  }

  private async update(full: boolean): Promise<void> {
    const m = this.muster;
    // A child the list has not shown yet, or one whose status moved: read the list again.
    let children: ChildView[] | undefined = full ? undefined : this.views.current();
    if (!children) {
      children = await this.views.reload({ all: full });
      this.runs = listRuns(m.paths.dir).map(runView);
      // Only a read of every child re-derives the time-made states (stalled) of those with no new event.
      if (full) this.lastFull = Date.now();
      full = true;
    }
    this.lastUpdate = Date.now();
    if (this.closed) return;
    this.last = {
      primary: m.primary,
      children: children.map(childRow),
      views: children,
      runs: this.runs,
      budget: this.budgetNow(full),
      at: this.lastUpdate,
    };
    this.listener?.(this.last);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.loading?.catch(() => {});
    await this.watcher?.close();
  }
}
