import * as path from "node:path";
import { MusterError } from "../base/errors.js";

// A holder that dies or freezes (SIGSTOP, a debugger) stops refreshing its lock, which then counts as stale
// after STALE_MS and is taken over. A live holder refreshes it every STALE_MS / 2.
const STALE_MS = 10_000;
// The retries must outlast the stale time by a margin: with ~200 retries of at most 50 ms (the old setting,
// ~10 s in all), a spawn behind a frozen parent's registry lock failed "Lock file is already being held"
// instead of taking the lock over. 420 × ≤ 50 ms is ≥ 2 × STALE_MS before randomization.
const RETRY_MAX_MS = 50;
const LOCK_OPTIONS = {
  realpath: false,
  stale: STALE_MS,
  retries: {
    retries: Math.ceil((2 * STALE_MS) / RETRY_MAX_MS) + 20,
    factor: 1.3,
    minTimeout: 2,
    maxTimeout: RETRY_MAX_MS,
    randomize: true,
  },
};

/** Runs fn while holding the lock on `target` (which need not exist). */
export async function withFileLock<T>(target: string, fn: () => T | Promise<T>): Promise<T> {
  // Loaded on the first lock (proper-lockfile and graceful-fs take ~15 ms): most commands only read.
  const { default: lockfile } = await import("proper-lockfile");
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, LOCK_OPTIONS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ELOCKED") throw e;
    throw new MusterError(
      "busy",
      `${path.basename(target)} (${path.dirname(target)}) stayed locked by another live muster process for over ${(2 * STALE_MS) / 1000}s; try again when it has finished`,
      { cause: e },
    );
  }
  try {
    return await fn();
  } finally {
    await release();
  }
}
