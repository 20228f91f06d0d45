import type { Muster } from "../core/muster.js";
import type { PrimaryWatcher } from "../core/watcher.js";
import { formatUsd } from "../util/cost.js";
import { listRuns } from "../workflows/run-log.js";
import { runSettled } from "./tree.js";
import { type ChildView, childView, type RunView, type TopChildInput } from "./view.js";

/** Everything one frame of top shows, read from the core. */
export interface Snapshot {
  primary: string;
  children: ChildView[];
  runs: RunView[];
  budget: string;
  at: number;
}

export interface SourceOptions {
  /** At most one re-read per this many ms while events stream in (default 1000). */
  minIntervalMs?: number;
  /** While a turn runs, re-read at least this often for time-derived states such as stalled (default 10 s). */
  activeRefreshMs?: number;
  /** Liveness probe period handed to the core watcher (default: the watcher's own 2 s). */
  livenessMs?: number;
}

/** "$1.20/$5.00, 3000/10000 tok, 4/10 turns" (used of the limit), or "none" when the tree has no budget. */
function budgetText(m: Muster): string {
  const { budget, used, exhausted } = m.budget();
  if (!budget) return "none";
  const parts = [];
  if (budget.cost !== undefined) parts.push(`${formatUsd(used.cost)}/${formatUsd(budget.cost)}`);
  if (budget.tokens !== undefined) parts.push(`${used.tokens}/${budget.tokens} tok`);
  if (budget.turns !== undefined) parts.push(`${used.turns}/${budget.turns} turns`);
  return `${parts.join(", ") || "set"}${exhausted ? " EXHAUSTED" : ""}`;
}

// The budget report reads every child's events: it is re-read at most this often.
const BUDGET_MS = 10_000;

/**
 * top's view of one primary: snapshots from the core's list (so states and names are what ls shows),
 * re-read when the core's watcher reports events (throttled), never on a polling loop of its own.
 */
export class TopSource {
  private watcher: PrimaryWatcher | undefined;
  private readonly models = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private dirty = false;
  private lastLoad = 0;
  private budget = { text: "none", at: -Infinity };
  private closed = false;
  private listener: ((s: Snapshot) => void) | undefined;
  last: Snapshot | undefined;

  constructor(
    readonly muster: Muster,
    private readonly opts: SourceOptions = {},
  ) {}

  /** Starts the watcher and delivers the first snapshot before resolving. */
  async start(onSnapshot: (s: Snapshot) => void): Promise<void> {
    this.listener = onSnapshot;
    this.watcher = await this.muster.watch({
      onEvent: (id, e) => {
        if (e.type === "turn_started" && e.model) this.models.set(id, e.model);
        this.schedule();
      },
      ...(this.opts.livenessMs ? { livenessMs: this.opts.livenessMs } : {}),
    });
    await this.refresh();
  }

  /** Re-reads now (`force`: the `r` key, the budget too), or right after a read in progress. */
  async refresh(force = false): Promise<void> {
    if (this.loading) {
      this.dirty = true;
      return this.loading;
    }
    this.loading = this.load(force).finally(() => {
      this.loading = undefined;
      if (this.dirty && !this.closed) {
        this.dirty = false;
        this.schedule();
      }
    });
    return this.loading;
  }

  /** A re-read soon: coalesces bursts of events, at most one per minIntervalMs. */
  schedule(): void {
    if (this.closed || this.timer) return;
    if (this.loading) {
      this.dirty = true;
      return;
    }
    const wait = Math.max(30, this.lastLoad + (this.opts.minIntervalMs ?? 1000) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, wait);
  }

  /** Whether a timed re-read is due (time-derived states change without an event). */
  due(now: number): boolean {
    const active = this.last?.children.some((c) => c.active) ?? false;
    return active && now - this.lastLoad >= (this.opts.activeRefreshMs ?? 10_000);
  }

  private budgetNow(force: boolean): string {
    const now = Date.now();
    if (force || now - this.budget.at >= BUDGET_MS) this.budget = { text: budgetText(this.muster), at: now };
    return this.budget.text;
  }

  private async load(force = false): Promise<void> {
    const m = this.muster;
    const children = (await m.list()) as TopChildInput[];
    const runs: RunView[] = listRuns(m.paths.dir).map((r) => ({
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
    }));
    this.lastLoad = Date.now();
    if (this.closed) return;
    this.last = {
      primary: m.primary,
      children: children.map((c) => childView(c, this.models.get(c.entry.id))),
      runs,
      budget: this.budgetNow(force),
      at: this.lastLoad,
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
