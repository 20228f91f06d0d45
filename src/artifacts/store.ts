/**
 * What the parent side does with a child's files, as one seam. Today every store is the artifact dir on this
 * machine (store-local.ts); a child placed elsewhere gets a local mirror fed by a stream, so readers (the
 * feed, loadChild, results) keep working on local files while writes go out through the same methods.
 */
import type { CancelSnapshot } from "./cancel-snapshot.js";
import type { ControlRequest } from "./control.js";
import type { ChildMeta, EventInput, MusterEvent, OutputRef } from "./events.js";
import type { InboxItem } from "./inbox.js";
import type { ChildFiles } from "./layout.js";
import type { MalformedLine, NdjsonReader } from "./reader.js";

/** What a parent-side append writes through: an open EventLog, or the records bound for a far log. */
export interface EventAppender {
  append(input: EventInput): MusterEvent;
}

/** A mirrored child whose place does not answer: since when (ISO 8601) and why, in one line. */
export interface LinkDown {
  since: string;
  why: string;
}

export interface ChildStore {
  /** The child's artifact dir on this machine (for a remote child, its mirror). */
  readonly dir: string;
  /** The file names inside it (layout.ts). */
  readonly files: ChildFiles;

  /** Whether events.ndjson is there at all (lstat: a symlink in its place counts, and is refused on read). */
  hasEvents(): boolean;
  /** The whole event log in byte order; malformed spans are reported, a refused file throws. */
  readEvents(onMalformed?: (m: MalformedLine) => void): MusterEvent[];
  /** A reader of the event log from byte `cursor` on (what the feed tails). */
  eventReader(cursor: number, onMalformed?: (m: MalformedLine) => void): NdjsonReader<MusterEvent>;
  /** The file an fs.watch hint is taken on for new events. */
  readonly eventsFile: string;
  /**
   * Appends events from the parent side under the child's lock: `fn` gets the log as it is then and an open
   * writer (closed after). The host holds the same lock for its own parent-visible settling. For a mirrored
   * child the records are written on the far side, under its lock, only onto the log `fn` saw: `fn` runs
   * again on the newer log when the host wrote meanwhile, so it must decide from `events` alone.
   */
  appendAsParent<T>(fn: (events: MusterEvent[], log: EventAppender) => T | Promise<T>): Promise<T>;

  /** turnIds waiting in the inbox, in arrival order. */
  queuedTurns(): string[];
  /** Drops one requested turn into the inbox (and wakes the host); returns the item's file. */
  dropInboxItem(item: InboxItem): string;
  /** A request to the running host (control/). */
  writeControl(req: ControlRequest): void;
  /** The closing mark a cancel leaves before it stops the host. */
  markClosing(why?: string): void;
  isClosing(): boolean;
  /** Clears the closing mark (a resume). */
  clearClosing(): void;
  /** Whether request `requestId` has an answer the asker has not taken yet. */
  hasAnswer(requestId: string): boolean;
  /** Writes the answer once: false when one was written already (the first one stands). */
  writeAnswer(requestId: string, text: string): boolean;

  /** meta.json, undefined when absent; a refused file throws. */
  readMeta(): ChildMeta | undefined;
  /** A turn's answer snapshot, checked against its recorded size and hash. */
  readSnapshot(ref: OutputRef): { text: string; intact: boolean };
  /** The first `maxBytes` of a turn's answer snapshot (a preview). */
  readSnapshotHead(ref: OutputRef, maxBytes: number): Buffer;
  /** The cancellation snapshot of one turn, or undefined (none, or not readable as one). */
  readCancelSnapshot(turnId: string): CancelSnapshot | undefined;
  /** A mirror's link to its child's place, when it is down (only a mirrored child has one). */
  linkDown?(): LinkDown | undefined;
}

/** The stores of one primary's children. */
export interface ChildStores {
  /** The store of child `id` (a full id: it becomes a path). */
  child(id: string): ChildStore;
  /** The ids of every child that has a folder, in no particular order. */
  list(): string[];
  /** The folder whose new entries are the children a discovery watch sees appear. */
  readonly root: string;
}
