import * as fs from "node:fs";

export const MAX_RECORD_BYTES = 1024 * 1024;

export interface MalformedLine {
  /** Byte offset of the line's first byte. */
  offset: number;
  reason: string;
}

/**
 * Tails an NDJSON file from a byte cursor: reads only new bytes, splits on LF only,
 * leaves an unterminated tail for later, and skips (reports) malformed or oversized lines.
 */
export class NdjsonReader<T = unknown> {
  /** Offset just past the last complete line consumed. */
  cursor: number;

  constructor(
    readonly file: string,
    private readonly onMalformed: (m: MalformedLine) => void = () => {},
    startAt = 0,
    private readonly maxRecordBytes = MAX_RECORD_BYTES,
  ) {
    this.cursor = startAt;
  }

  /** Reads everything appended since the last call; missing file reads as empty. */
  readNew(): T[] {
    // The common case on a poll is "nothing new": one stat, no open.
    const st = fs.statSync(this.file, { throwIfNoEntry: false });
    if (!st || st.size === this.cursor) return [];
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw e;
    }
    const records: T[] = [];
    try {
      const size = fs.fstatSync(fd).size;
      if (size < this.cursor) {
        // The file was replaced or truncated: nothing after our cursor is trustworthy, start over.
        this.onMalformed({ offset: this.cursor, reason: `file shrank to ${size} bytes; re-reading from 0` });
        this.cursor = 0;
      }
      while (this.cursor < size) {
        const want = Math.min(size - this.cursor, 4 * this.maxRecordBytes);
        const buf = Buffer.allocUnsafe(want);
        const got = fs.readSync(fd, buf, 0, want, this.cursor);
        if (got <= 0) break;
        const consumed = this.consume(buf.subarray(0, got), records, got < size - this.cursor);
        if (consumed === 0) break;
        this.cursor += consumed;
      }
    } finally {
      fs.closeSync(fd);
    }
    return records;
  }

  /** Parses complete lines in buf; returns how many bytes were consumed. */
  private consume(buf: Buffer, out: T[], moreFollows: boolean): number {
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      this.parseLine(buf.subarray(start, nl), this.cursor + start, out);
      start = nl + 1;
    }
    if (start === 0 && buf.length >= 4 * this.maxRecordBytes) {
      // A line longer than any legal record: skip it whole once its end arrives, without holding it.
      if (!moreFollows) return 0;
      this.onMalformed({ offset: this.cursor, reason: `record exceeds ${this.maxRecordBytes} bytes` });
      return buf.length;
    }
    return start;
  }

  private parseLine(line: Buffer, offset: number, out: T[]): void {
    if (line.length === 0) return;
    if (line.length > this.maxRecordBytes) {
      this.onMalformed({ offset, reason: `record exceeds ${this.maxRecordBytes} bytes` });
      return;
    }
    try {
      const value = JSON.parse(line.toString("utf8")) as unknown;
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        this.onMalformed({ offset, reason: "record is not a JSON object" });
        return;
      }
      out.push(value as T);
    } catch (e) {
      this.onMalformed({ offset, reason: `invalid JSON: ${(e as Error).message}` });
    }
  }
}

/** Reads a whole NDJSON file once (same rules as the tail reader). */
export function readAllRecords<T>(file: string, onMalformed?: (m: MalformedLine) => void): T[] {
  return new NdjsonReader<T>(file, onMalformed).readNew();
}
