import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileNoFollow } from "../util/fsx.js";
import { hostAlive } from "../util/proc.js";
import { READ_CAPS, readJsonBounded } from "../util/safe-read.js";

/** One running turn's claim: `slots/<childId>.json` under the primary. */
interface Ticket {
  pid: number;
  childId: string;
  artifactDir: string;
  /** What the holding process's command line names, when not the artifact dir (a place's keeper). */
  holder?: string;
  since: string;
  /** The parent whose slot this turn runs in (see RunSlots); absent for a slot of its own. */
  lentBy?: string;
}

const POLL_MS = 500;
// The admission check is a few file reads; a lock older than this was left by a crashed host.
const STALE_LOCK_MS = 5000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * A tiny mkdir lock (atomic on every filesystem). Not proper-lockfile: it would add ~40 ms to every
 * child host's start-up, and the critical section here is a millisecond of file reads.
 */
async function withAdmissionLock<T>(lockDir: string, fn: () => T): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      fs.mkdirSync(lockDir);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const st = fs.statSync(lockDir, { throwIfNoEntry: false });
      if (st && Date.now() - st.mtimeMs > STALE_LOCK_MS) fs.rmSync(lockDir, { recursive: true, force: true });
      if (attempt > 2000) throw new Error(`cannot take the run-slot lock ${lockDir}`);
      await sleep(2 + Math.random() * 10);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * The primary's bound on running turns, shared by every child host of the primary (any parent process):
 * a turn runs only while its host holds a ticket, admitted under a lock when fewer than `limit` live
 * tickets exist. A ticket of a dead host does not count, so a crash never leaks a slot.
 *
 * A parent that is itself a running child holds a ticket while it waits for its own children: with every
 * slot held by such parents, their children would queue forever (measured: limit 1, one delegating child,
 * a deadlock until the parent was killed). So when the bound is reached, a child may run in its parent's
 * slot while the parent's turn holds it, one child at a time: the pair counts once, and the deepest
 * waiting turn always has a slot.
 */
export class RunSlots {
  private readonly ticket: string;

  constructor(
    private readonly dir: string,
    private readonly limit: number,
    private readonly childId: string,
    private readonly artifactDir: string,
    /** The spawning child (meta.parent), whose slot this child may borrow; null for a primary's child. */
    private readonly parentId: string | null = null,
    /**
     * What the ticket's process has on its command line, for the liveness check: the artifact dir (a host),
     * or a mark of the process that holds tickets for many children (a place's keeper).
     */
    private readonly holder?: string,
  ) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.ticket = path.join(dir, `${childId}.json`);
  }

  /** Live tickets other than ours, by child id (stale ones are removed as they are found). */
  private liveTickets(): Map<string, Ticket> {
    const live = new Map<string, Ticket>();
    for (const name of fs.readdirSync(this.dir)) {
      if (!name.endsWith(".json") || name === `${this.childId}.json`) continue;
      const file = path.join(this.dir, name);
      try {
        const t = readJsonBounded<Ticket>(file, READ_CAPS.smallJson);
        if (hostAlive(t.pid, t.holder ?? t.artifactDir)) live.set(t.childId, t);
        else fs.rmSync(file, { force: true });
      } catch {
        // A ticket being written or removed right now: not counted.
      }
    }
    return live;
  }

  /** Slots in use: a turn running in its parent's slot counts only once its parent's turn has ended. */
  private static used(live: Map<string, Ticket>): number {
    let n = 0;
    for (const t of live.values()) if (!(t.lentBy && live.has(t.lentBy))) n += 1;
    return n;
  }

  /** The parent's slot is ours to borrow: its turn holds one and no other child runs in it. */
  private canBorrow(live: Map<string, Ticket>): boolean {
    if (!this.parentId || !live.has(this.parentId)) return false;
    for (const t of live.values()) if (t.lentBy === this.parentId) return false;
    return true;
  }

  /** Tries once; returns how many run when the slot was refused, or undefined when granted. */
  async tryAcquire(): Promise<number | undefined> {
    return withAdmissionLock(path.join(this.dir, "admission.lock"), () => {
      const live = this.liveTickets();
      const n = RunSlots.used(live);
      const borrow = n >= this.limit && this.canBorrow(live);
      if (n >= this.limit && !borrow) return n;
      const t: Ticket = {
        pid: process.pid,
        childId: this.childId,
        artifactDir: this.artifactDir,
        ...(this.holder ? { holder: this.holder } : {}),
        since: new Date().toISOString(),
        ...(borrow ? { lentBy: this.parentId! } : {}),
      };
      // A symlink planted at the ticket's path is replaced, never written through.
      writeFileNoFollow(this.ticket, JSON.stringify(t));
      return undefined;
    });
  }

  /** Waits for a slot; `onQueued` is told once when the turn has to wait; false if `stopped()` ended the wait. */
  async acquire(onQueued: (running: number) => void, stopped: () => boolean): Promise<boolean> {
    let told = false;
    for (;;) {
      if (stopped()) return false;
      const refused = await this.tryAcquire();
      if (refused === undefined) return true;
      if (!told) onQueued(refused);
      told = true;
      await this.nextChange();
    }
  }

  /** Resolves on a change in the slots folder (a ticket released) or after the poll interval. */
  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      let w: fs.FSWatcher | undefined;
      const done = (): void => {
        clearTimeout(timer);
        w?.close();
        resolve();
      };
      const timer = setTimeout(done, POLL_MS);
      try {
        w = fs.watch(this.dir, done);
        w.on("error", done);
      } catch {
        w = undefined;
      }
    });
  }

  release(): void {
    fs.rmSync(this.ticket, { force: true });
  }

  get max(): number {
    return this.limit;
  }
}
