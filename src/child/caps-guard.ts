/**
 * Enforces caps on the running turn from outside the model: the host sees every message of its agent, so it
 * keeps the clocks (wall clock, idle) and the counts (tool calls, tokens, cost) and ends the turn — the
 * runner's process group TERM then KILL, as a cancel does — with outcome `exhausted` naming the cap.
 * Cumulative counts cover this child and its descendants (its caps) and the whole tree (the tree's caps);
 * what other hosts record is re-read from disk once a second, this turn's own messages count at once.
 */
import { readBudget } from "../artifacts/budget.js";
import {
  addUsage,
  CAP_FLAG,
  type Caps,
  type CapUsage,
  capSpent,
  descendantLogBytes,
  hasCaps,
  NO_USAGE,
  subtreeOf,
  sumUsage,
  usageByChild,
} from "../artifacts/caps.js";
import type { AgentMessage } from "../runners/types.js";
import { timerDelay } from "../util/timer-limit.js";

const TICK_MS = 1000;

export const formatMs = (ms: number): string =>
  ms < 1000
    ? `${ms}ms`
    : ms < 120_000
      ? `${Math.round(ms / 100) / 10}s`
      : ms < 7_200_000
        ? `${Math.round(ms / 6000) / 10}m`
        : `${Math.round(ms / 360_000) / 10}h`;

/** Caps in force for one turn: this child's (its subtree) and the tree's (since the budget was set). */
interface Scopes {
  child: Caps | undefined;
  tree: Caps | undefined;
  since: string | undefined;
}

export class CapGuard {
  private timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | undefined;
  private idleMs: number | undefined;
  private waiting = false;
  /** What the descendants' event logs held at the last look. */
  private childBytes = 0;
  private scopes: Scopes = { child: undefined, tree: undefined, since: undefined };
  /** Usage on disk at the last read: this child's subtree and the whole tree. */
  private disk = { subtree: { ...NO_USAGE }, tree: { ...NO_USAGE } };
  /** This turn's own counts since the last read (the disk has them too, once re-read). */
  private local = { ...NO_USAGE };

  constructor(
    private readonly primaryDir: string,
    private readonly childId: string,
    private readonly childCaps: Caps | undefined,
  ) {}

  private readScopes(): Scopes {
    const budget = readBudget(this.primaryDir);
    return { child: this.childCaps, tree: budget?.caps, since: budget?.since };
  }

  private active(): boolean {
    return hasCaps(this.scopes.child) || hasCaps(this.scopes.tree);
  }

  /** Re-reads what every child recorded (only when a cumulative cap is set: it reads the tree's events). */
  private readDisk(): void {
    const { child, tree, since } = this.scopes;
    const cumulative = (c: Caps | undefined): boolean =>
      !!c && (c.maxTurns ?? c.maxToolCalls ?? c.maxTokens ?? c.maxCost) !== undefined;
    if (cumulative(child)) {
      const all = usageByChild(this.primaryDir);
      this.disk.subtree = sumUsage(all, subtreeOf(all, this.childId));
    }
    if (cumulative(tree)) this.disk.tree = sumUsage(usageByChild(this.primaryDir, since));
    this.local = { ...NO_USAGE };
  }

  /** Why the turn that just recorded turn_started may not run (a cumulative cap is spent), if so. */
  refuse(): string | undefined {
    this.scopes = this.readScopes();
    if (!this.active()) return undefined;
    this.readDisk();
    // This turn's own turn_started is already counted: the caps are about the turns before it.
    const before = (u: CapUsage): CapUsage => ({ ...u, turns: u.turns - 1 });
    return (
      capSpent(this.scopes.child, before(this.disk.subtree), "this child and its children") ??
      capSpent(this.scopes.tree, before(this.disk.tree), "the tree")
    );
  }

  private spent(): string | undefined {
    // A turn running is already counted: turns only stop new turns, the others end this one.
    const live = (u: CapUsage): CapUsage => ({ ...addUsage(u, this.local), turns: 0 });
    return (
      capSpent(this.scopes.child, live(this.disk.subtree), "this child and its children") ??
      capSpent(this.scopes.tree, live(this.disk.tree), "the tree")
    );
  }

  /** Starts the clocks of a turn; `exhaust` ends it, naming the cap. */
  start(exhaust: (reason: string) => void): void {
    this.stop();
    this.scopes = this.readScopes();
    if (!this.active()) return;
    const fire = (reason: string | undefined): void => {
      if (!reason) return;
      this.stop();
      exhaust(reason);
    };
    this.check = () => fire(this.spent());
    const { child, tree } = this.scopes;
    const maxTime = Math.min(child?.maxTimeMs ?? Infinity, tree?.maxTimeMs ?? Infinity);
    if (maxTime !== Infinity)
      this.timers.push(
        setTimeout(
          () => fire(`cap reached: ${CAP_FLAG.maxTimeMs} ${formatMs(maxTime)} (the turn ran that long)`),
          // Caps are refused over the timer's limit when set; one in a file from elsewhere is clamped, not fired at once.
          timerDelay(maxTime),
        ),
      );
    const idle = Math.min(child?.idleTimeoutMs ?? Infinity, tree?.idleTimeoutMs ?? Infinity);
    if (idle !== Infinity) {
      this.idleMs = idle;
      this.childBytes = descendantLogBytes(this.primaryDir, this.childId);
      this.idleFire = () => {
        // Its children recorded something meanwhile: it waits on working children, it is not idle.
        if (this.childrenActive()) return;
        fire(
          `cap reached: ${CAP_FLAG.idleTimeoutMs} ${formatMs(idle)} (no output from the agent or its children for that long)`,
        );
      };
      this.armIdle();
    }
    this.timers.push(
      setInterval(() => {
        // Caps of the tree may be set or changed while the turn runs.
        this.scopes = this.readScopes();
        this.readDisk();
        this.check();
        this.childrenActive();
      }, TICK_MS),
    );
  }

  private check: () => void = () => {};
  private idleFire: () => void = () => {};

  /**
   * Whether its children recorded anything since the last look (then the idle clock starts over): an agent
   * waiting on working children is not idle.
   */
  private childrenActive(): boolean {
    if (this.idleMs === undefined) return false;
    const bytes = descendantLogBytes(this.primaryDir, this.childId);
    const active = bytes !== this.childBytes;
    this.childBytes = bytes;
    if (active) this.armIdle();
    return active;
  }

  private armIdle(): void {
    clearTimeout(this.idleTimer);
    if (this.idleMs === undefined || this.waiting) return;
    this.idleTimer = setTimeout(() => this.idleFire(), timerDelay(this.idleMs));
  }

  /** A message from the agent: it is not idle; tool calls and usage count at once. */
  message(m: AgentMessage): void {
    if (this.timers.length === 0) return;
    this.armIdle();
    if (m.type === "tool" && m.phase === "start") this.local.toolCalls += 1;
    else if (m.type === "usage") {
      this.local.tokens += m.usage.input + m.usage.output;
      this.local.cost += m.usage.cost ?? 0;
    } else return;
    this.check();
  }

  /** While the agent waits for its parent's answer (muster ask) it is not idle: the idle clock pauses. */
  setWaiting(waiting: boolean): void {
    this.waiting = waiting;
    if (this.timers.length === 0) return;
    if (waiting) clearTimeout(this.idleTimer);
    else this.armIdle();
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    clearTimeout(this.idleTimer);
    this.timers = [];
    this.idleMs = undefined;
    this.check = () => {};
  }
}
