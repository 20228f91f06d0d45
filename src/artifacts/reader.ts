import * as fs from "node:fs";
import { openRegular } from "../util/safe-read.js";

export const MAX_RECORD_BYTES = 1024 * 1024;

/** A held reader's read buffer: most records are far smaller; a longer one is read by the file's size. */
const HELD_READ_BYTES = 16 * 1024;
/**
 * Files held open by all readers of this process: beyond it readers open per read, as they did, so a
 * watcher of thousands of children stays far from the descriptor limit (1024 by default).
 */
export const MAX_HELD_FILES = 256;
let heldFiles = 0;

/** A span of an NDJSON file that is not a record: reported, never fatal. */
export interface MalformedLine {
  /** Byte offset of the span's first byte. */
  offset: number;
  /** Bytes in the span, without its LF. */
  length: number;
  reason: string;
}

/**
 * Tails an NDJSON file from a byte cursor: reads only new bytes, splits on LF only,
 * leaves an unterminated tail for later, and skips (reports) malformed or oversized lines.
 * The file is opened without following a symlink and must be a regular file (safe-read.ts).
 */
export class NdjsonReader<T = unknown> {
  /** Offset just past the last complete line consumed. */
  cursor: number;
  /** An oversized line being skipped chunk by chunk: reported once, when its LF arrives. */
  private skipping: MalformedLine | undefined;
  private holding = false;
  private held: { fd: number; ino: number } | undefined;
  private scratch: Buffer | undefined;

  /**
   * endAt: reads stop at this offset, as if the file ended there (what a file held before lines appended
   * since; a line cut by it is not complete).
   */
  constructor(
    readonly file: string,
    private readonly onMalformed: (m: MalformedLine) => void = () => {},
    startAt = 0,
    private readonly maxRecordBytes = MAX_RECORD_BYTES,
    private readonly endAt = Number.POSITIVE_INFINITY,
  ) {
    this.cursor = startAt;
  }

  /**
   * Keeps the file open between reads (a feed's tail, which closes it): a read after a watch hint is then one
   * pread from the cursor, with no stat or open. Whether the path still names that file (replaced, gone, now
   * a symlink, shrunk) is looked at by a read with `recheck` (the feed's safety poll) and by one that finds
   * nothing past the cursor.
   */
  hold(): this {
    this.holding = true;
    return this;
  }

  /** Closes the file a held reader keeps open (reading again opens it again). */
  close(): void {
    if (!this.held) return;
    fs.closeSync(this.held.fd);
    this.held = undefined;
    heldFiles -= 1;
  }

  /** Reads everything appended since the last call; missing file reads as empty. */
  readNew(opts: { recheck?: boolean } = {}): T[] {
    const records: T[] = [];
    if (this.held && !opts.recheck && this.readHeld(this.held.fd, records)) return records;
    this.readByPath(records);
    return records;
  }

  /**
   * The fast path: reads to EOF through a small buffer. False (read by the path and size then) when a line
   * outgrows the buffer, or when a hint found nothing past the cursor: the file may have shrunk.
   */
  private readHeld(fd: number, records: T[]): boolean {
    this.scratch ??= Buffer.allocUnsafe(HELD_READ_BYTES);
    for (let first = true; ; first = false) {
      const want = Math.min(this.scratch.length, this.endAt - this.cursor);
      const got = want > 0 ? fs.readSync(fd, this.scratch, 0, want, this.cursor) : 0;
      if (got <= 0) return !first;
      const consumed = this.consume(this.scratch.subarray(0, got), records);
      this.cursor += consumed;
      // A short read ended at what is written now: what comes later comes with a hint of its own, so one
      // pread a hint, not a second one to find the end.
      if (consumed === 0 || got < want) return got < want;
    }
  }

  private readByPath(records: T[]): void {
    // The common case on a poll is "nothing new": one stat, no open. lstat: a symlink's size is its own.
    const st = fs.lstatSync(this.file, { throwIfNoEntry: false });
    // Gone, or another file under the name: what is held is not this log any more.
    if (this.held && (!st || st.ino !== this.held.ino)) this.close();
    if (!st || (st.isFile() && st.size === this.cursor)) return;
    const opened = this.held ? { fd: this.held.fd, size: fs.fstatSync(this.held.fd).size } : this.open();
    if (!opened) return;
    const { fd } = opened;
    const size = Math.min(opened.size, this.endAt);
    try {
      if (size < this.cursor) {
        // The file was replaced or truncated: nothing after our cursor is trustworthy, start over.
        this.onMalformed({
          offset: this.cursor,
          length: 0,
          reason: `file shrank to ${size} bytes; re-reading from 0`,
        });
        this.cursor = 0;
        this.skipping = undefined;
      }
      while (this.cursor < size) {
        const want = Math.min(size - this.cursor, 4 * this.maxRecordBytes);
        const buf = Buffer.allocUnsafe(want);
        const got = fs.readSync(fd, buf, 0, want, this.cursor);
        if (got <= 0) break;
        const consumed = this.consume(buf.subarray(0, got), records);
        if (consumed === 0) break;
        this.cursor += consumed;
      }
    } finally {
      if (this.held?.fd !== fd) fs.closeSync(fd);
    }
  }

  /** Opens the file (held from now on when asked and there is room); undefined when it is not there. */
  private open(): { fd: number; size: number } | undefined {
    try {
      const { fd, size, ino } = openRegular(this.file);
      if (this.holding && heldFiles < MAX_HELD_FILES) {
        this.held = { fd, ino };
        heldFiles += 1;
      }
      return { fd, size };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw e;
    }
  }

  /** Parses complete lines in buf; returns how many bytes were consumed. */
  private consume(buf: Buffer, out: T[]): number {
    let start = 0;
    if (this.skipping) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        this.skipping.length += buf.length;
        return buf.length;
      }
      this.skipping.length += nl;
      this.onMalformed(this.skipping);
      this.skipping = undefined;
      start = nl + 1;
    }
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      this.parseLine(buf.subarray(start, nl), this.cursor + start, out);
      start = nl + 1;
    }
    if (start === 0 && buf.length >= 4 * this.maxRecordBytes) {
      // A line longer than any legal record: skip it without holding it, and report it once it ends.
      this.skipping = {
        offset: this.cursor,
        length: buf.length,
        reason: `record exceeds ${this.maxRecordBytes} bytes`,
      };
      return buf.length;
    }
    return start;
  }

  private parseLine(line: Buffer, offset: number, out: T[]): void {
    if (line.length === 0) return;
    const reason = this.problemOf(line, out);
    if (reason) this.onMalformed({ offset, length: line.length, reason });
  }

  /** Pushes the line's record, or says why it is not one. */
  private problemOf(line: Buffer, out: T[]): string | undefined {
    if (line.length > this.maxRecordBytes) return `record exceeds ${this.maxRecordBytes} bytes`;
    let value: unknown;
    try {
      value = JSON.parse(line.toString("utf8"));
    } catch {
      // Not the parser's message: it quotes the line, and the line may hold anything (terminal escapes too).
      return "invalid JSON";
    }
    if (value === null || typeof value !== "object" || Array.isArray(value))
      return "record is not a JSON object";
    out.push(value as T);
    return undefined;
  }
}

/** Reads a whole NDJSON file once (same rules as the tail reader). */
export function readAllRecords<T>(file: string, onMalformed?: (m: MalformedLine) => void): T[] {
  return new NdjsonReader<T>(file, onMalformed).readNew();
}
