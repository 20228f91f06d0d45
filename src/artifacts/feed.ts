import * as fs from "node:fs";
import * as path from "node:path";
import type { MusterEvent } from "./events.js";
import type { MalformedLine, NdjsonReader } from "./reader.js";
import type { ChildStore } from "./store.js";

/** What a subscriber hears besides its events. */
export interface SubscribeOptions {
  /** Byte offset to read from (default 0: the whole log first). */
  from?: number;
  onMalformed?: (m: MalformedLine) => void;
  /** A file that cannot be read safely (refused, unreadable); without it, reported as malformed. */
  onError?: (e: Error) => void;
}

/** One child's place in a feed: read it now (a hint from elsewhere), or leave. */
export interface FeedSubscription {
  readonly store: ChildStore;
  /** Offset just past the last complete line handed on. */
  readonly cursor: number;
  /** Reads what is new; `recheck` also looks at whether the log's path still names the file held open. */
  pump(recheck?: boolean): void;
  close(): void;
}

/**
 * The parent side's one reader of children's events. Each subscribed child is read from its byte cursor to
 * EOF whenever fs.watch hints at a change (Node shares one inotify instance per process across all of them);
 * one safety poll timer for the whole feed covers notifications that never come (pollMs 0: the owner calls
 * pumpAll on its own schedule).
 */
export class ChildFeed {
  private readonly subs = new Set<Subscription>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: { pollMs?: number } = {}) {}

  /** Starts handing on `store`'s events (those already there first, once pumped). */
  subscribe(
    store: ChildStore,
    onEvents: (events: MusterEvent[]) => void,
    opts: SubscribeOptions = {},
  ): FeedSubscription {
    const sub = new Subscription(store, onEvents, opts, (s) => this.drop(s));
    if (this.closed) {
      sub.close();
      return sub;
    }
    this.subs.add(sub);
    const poll = this.opts.pollMs ?? 1000;
    if (poll > 0 && !this.timer) this.timer = setInterval(() => this.pumpAll(), poll);
    return sub;
  }

  /** Reads every subscribed child to EOF (the safety poll). */
  pumpAll(): void {
    // A copy: a subscriber may leave (or another join) from inside its callback.
    for (const s of [...this.subs]) s.pump(true);
  }

  /** Children subscribed now. */
  get size(): number {
    return this.subs.size;
  }

  close(): void {
    this.closed = true;
    for (const s of [...this.subs]) s.close();
    this.stopTimer();
  }

  private drop(s: Subscription): void {
    this.subs.delete(s);
    if (this.subs.size === 0) this.stopTimer();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}

class Subscription implements FeedSubscription {
  private readonly reader: NdjsonReader<MusterEvent>;
  private watcher: fs.FSWatcher | undefined;
  private folder: fs.FSWatcher | undefined;
  private closed = false;
  private lastError: string | undefined;

  constructor(
    readonly store: ChildStore,
    private readonly onEvents: (events: MusterEvent[]) => void,
    private readonly opts: SubscribeOptions,
    private readonly onClose: (s: Subscription) => void,
  ) {
    this.reader = store.eventReader(opts.from ?? 0, opts.onMalformed).hold();
    this.watchLog();
    // A child just made has no log yet: its folder says when the log appears, not a poll up to a tick later.
    if (!this.watcher) this.watchFolder();
  }

  private watchLog(): void {
    try {
      this.watcher = fs.watch(this.store.eventsFile, () => this.pump());
      this.watcher.on("error", () => {});
    } catch {
      this.watcher = undefined; // not there yet
    }
  }

  private watchFolder(): void {
    const name = path.basename(this.store.eventsFile);
    try {
      this.folder = fs.watch(path.dirname(this.store.eventsFile), (_type, file) => {
        if (file === null || file === name) this.pump();
      });
      this.folder.on("error", () => {});
    } catch {
      this.folder = undefined; // no folder either: the poll finds the log
    }
  }

  get cursor(): number {
    return this.reader.cursor;
  }

  /** Reads whatever is new and hands it on; a file that cannot be read safely is reported once, never thrown. */
  pump(recheck = false): void {
    if (this.closed) return;
    if (!this.watcher) {
      this.watchLog();
      if (this.watcher) {
        this.folder?.close();
        this.folder = undefined;
      }
    }
    let events: MusterEvent[];
    try {
      events = this.reader.readNew({ recheck });
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
    if (this.closed) return;
    this.closed = true;
    this.watcher?.close();
    this.folder?.close();
    this.reader.close();
    this.onClose(this);
  }
}
