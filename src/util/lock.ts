import lockfile from "proper-lockfile";

// Two parents may update at once: wait for the lock rather than fail (proper-lockfile's default is 0 retries).
const LOCK_OPTIONS = {
  realpath: false,
  stale: 10_000,
  retries: { retries: 200, factor: 1.3, minTimeout: 2, maxTimeout: 50, randomize: true },
};

/** Runs fn while holding the lock on `target` (which need not exist). */
export async function withFileLock<T>(target: string, fn: () => T | Promise<T>): Promise<T> {
  const release = await lockfile.lock(target, LOCK_OPTIONS);
  try {
    return await fn();
  } finally {
    await release();
  }
}
