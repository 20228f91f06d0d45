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

  constructor(
    readonly file: string,
    private readonly onEvents: (events: MusterEvent[]) => void,
    opts: { pollMs?: number; onMalformed?: (m: MalformedLine) => void } = {},
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

  /** Reads whatever is new and hands it on. */
  pump(): void {
    if (this.closed) return;
    const events = this.reader.readNew();
    if (events.length > 0) this.onEvents(events);
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    if (this.timer) clearInterval(this.timer);
  }
}
