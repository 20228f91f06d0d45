import * as fs from "node:fs";

/** How often a long-lived muster process looks for its own folder (a state root deleted under it). */
export const ORPHAN_CHECK_MS = 5000;

/**
 * Calls `onGone` once `dir` no longer exists: its state root was deleted, so no muster command can reach
 * this process again (it would run on as an orphan for as long as its agent lives). The timer never
 * keeps the process alive by itself.
 */
export function whenDirGone(dir: string, onGone: () => void, everyMs = ORPHAN_CHECK_MS): () => void {
  const timer = setInterval(() => {
    if (fs.existsSync(dir)) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Kills this process's own process group (it leads one: a pane's command), itself included, then exits. */
export function killOwnGroup(): never {
  try {
    process.kill(-process.pid, "SIGKILL");
  } catch {
    // Not a group leader: only this process goes.
  }
  process.exit(1);
}
