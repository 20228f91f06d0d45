import * as fs from "node:fs";
import type { MusterEvent } from "./events.js";
import { type MalformedLine, NdjsonReader } from "./reader.js";

/**
 * Follows one events.ndjson: an fs.watch notification is only a hint to read to EOF from the
 * byte cursor; a slow safety poll covers notifications that never come.
 */
export class EventTail {
  private readonly reader: NdjsonReader<MusterEvent>;
  private watcher: fs.FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private lastError: string | undefined;

  constructor(
    readonly file: string,
    private readonly onEvents: (events: MusterEvent[]) => void,
    private readonly opts: {
      pollMs?: number;
      onMalformed?: (m: MalformedLine) => void;
      /** A file that cannot be read safely (refused, unreadable); without it, reported as malformed. */
      onError?: (e: Error) => void;
    } = {},
  ) {
    this.reader = new NdjsonReader<MusterEvent>(file, opts.onMalformed);
    try {
      this.watcher = fs.watch(file, () => this.pump());
      this.watcher.on("error", () => {});
    } catch {
      this.watcher = undefined; // file not there yet: the poll finds it
    }
    // pollMs 0: the owner pumps on its own schedule (one timer for many tails).
    const poll = opts.pollMs ?? 1000;
    if (poll > 0) this.timer = setInterval(() => this.pump(), poll);
  }

  /** Reads whatever is new and hands it on; a file that cannot be read safely is reported once, never thrown. */
  pump(): void {
    if (this.closed) return;
    let events: MusterEvent[];
    try {
      events = this.reader.readNew();
    } catch (e) {
      // Called from timers and fs.watch: a throw here would end the whole parent process.
      const reason = (e as Error).message;
      if (reason !== this.lastError) {
        if (this.opts.onError) this.opts.onError(e as Error);
        else this.opts.onMalformed?.({ offset: this.reader.cursor, length: 0, reason });
      }
      this.lastError = reason;
      return;
    }
    this.lastError = undefined;
    if (events.length > 0) this.onEvents(events);
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }
}
