import * as fs from "node:fs";

// fs.watch is only a hint: this bounds the wait when a notification is lost.
const SAFETY_POLL_MS = 2000;
// Without a watch at all (the user's inotify instances are used up: 128 by default, one per process that
// watches, e.g. ~127 idle child hosts), the folder is polled this often instead: a follow-up or a control
// request waits at most this long, not the safety poll's 2 s.
export const FALLBACK_POLL_MS = 200;

/**
 * Calls `onChange` when `dir` may have changed: on each fs.watch notification, and on a poll (slow while the
 * watch works, fast when it could not be set up). `watching` says which.
 */
export class DirWatch {
  private readonly watcher: fs.FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;
  readonly watching: boolean;
  /** How often the folder is polled besides the watch. */
  readonly pollMs: number;

  constructor(
    dir: string,
    onChange: () => void,
    /** fs.watch, or a stand-in in tests (one that throws as fs.watch does with no inotify instance left). */
    watch: (dir: string, listener: () => void) => fs.FSWatcher = fs.watch,
  ) {
    let watcher: fs.FSWatcher | undefined;
    try {
      watcher = watch(dir, onChange);
      watcher.on("error", () => {});
    } catch {
      watcher = undefined;
    }
    this.watcher = watcher;
    this.watching = watcher !== undefined;
    this.pollMs = this.watching ? SAFETY_POLL_MS : FALLBACK_POLL_MS;
    this.timer = setInterval(onChange, this.pollMs);
  }

  close(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }
}
