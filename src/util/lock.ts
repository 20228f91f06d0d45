import * as path from "node:path";
import { MusterError } from "../base/errors.js";

// A holder that dies or freezes (SIGSTOP, a debugger) stops refreshing its lock, which then counts as stale
// after STALE_MS and is taken over. A live holder refreshes it every STALE_MS / 2.
const STALE_MS = 10_000;
// The waiting must outlast the stale time by a margin: with ~10 s of retries (an old setting), a spawn behind
// a frozen parent's registry lock failed "Lock file is already being held" instead of taking the lock over.
const WAIT_MS = 2 * STALE_MS + 1000;
const RETRY_MIN_MS = 2;
const RETRY_MAX_MS = 50;
const LOCK_OPTIONS = { realpath: false, stale: STALE_MS, retries: 0 };

/**
 * Takes the lock, retrying only while another process holds it (ELOCKED), with a growing randomized pause.
 * Any other failure (a read-only or full disk) is thrown at once: proper-lockfile's own retries would repeat
 * every error for the whole wait.
 */
async function acquire(target: string): Promise<() => Promise<void>> {
  // Loaded on the first lock (proper-lockfile and graceful-fs take ~15 ms): most commands only read.
  const { default: lockfile } = await import("proper-lockfile");
  const deadline = Date.now() + WAIT_MS;
  let pause = RETRY_MIN_MS;
  for (;;) {
    try {
      return await lockfile.lock(target, LOCK_OPTIONS);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ELOCKED" || Date.now() >= deadline) throw e;
      await new Promise((r) => setTimeout(r, pause * (0.5 + Math.random())));
      pause = Math.min(pause * 1.3, RETRY_MAX_MS);
    }
  }
}

/** Runs fn while holding the lock on `target` (which need not exist). */
export async function withFileLock<T>(target: string, fn: () => T | Promise<T>): Promise<T> {
  let release: () => Promise<void>;
  try {
    release = await acquire(target);
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
