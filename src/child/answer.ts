import * as fs from "node:fs";
import * as path from "node:path";
import { MAX_SNAPSHOT_BYTES } from "../artifacts/snapshot.js";
import { openFreshNoFollow } from "../util/fsx.js";

// Writes to output.md are gathered up to this size: one syscall per chunk, not per streamed line.
const WRITE_CHUNK = 64 * 1024;
// …or for this long: a reader of output.md mid-turn (cancel --snapshot) sees the answer so far.
const WRITE_DELAY_MS = 500;
// Once the answer is too large to snapshot, only this much of its end stays in memory (for the conversation).
export const ANSWER_TAIL_BYTES = 64 * 1024;

/**
 * The turn's answer as it streams: written to output.md as it arrives, with only a bounded part in memory —
 * all of it while it still fits a snapshot (1 MiB), else its last 64 KiB. So the host's memory does not grow
 * with what the runner writes. A failed write (a full disk) stops writing output.md; the answer then lives
 * only in memory (bounded as above) and `error` says why.
 */
export class AnswerSink {
  /** Bytes of the answer so far. */
  total = 0;
  /** The first failed write of output.md. */
  error: Error | undefined;
  private fd: number | undefined;
  private pos = 0;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly file: string,
    private readonly onError: (e: Error) => void = () => {},
  ) {
    // output.md is mutable staging (the snapshot is the record): made anew here, never fsync'd. A symlink
    // planted in its place is replaced, never written through (that would overwrite a file elsewhere).
    try {
      this.fd = openFreshNoFollow(file);
    } catch (e) {
      this.fail(e as Error);
    }
  }

  /** Appends streamed answer text. */
  write(text: string): void {
    if (text === "") return;
    const buf = Buffer.from(text, "utf8");
    this.total += buf.length;
    this.keep(buf);
    if (this.fd === undefined) return;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= WRITE_CHUNK) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), WRITE_DELAY_MS);
      this.timer.unref();
    }
  }

  /** The answer is this text instead of what streamed (the agent's final `result`, `muster done`). */
  replace(text: string): void {
    const buf = Buffer.from(text, "utf8");
    this.total = buf.length;
    this.kept = [];
    this.keptBytes = 0;
    this.pending = [];
    this.pendingBytes = 0;
    this.keep(buf);
    if (this.fd === undefined) return;
    try {
      fs.ftruncateSync(this.fd, 0);
      this.pos = 0;
      this.writeAll(buf);
    } catch (e) {
      this.fail(e as Error);
    }
  }

  /** Writes what is gathered to output.md. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.fd === undefined || this.pendingBytes === 0) return;
    const data = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    try {
      this.writeAll(data);
    } catch (e) {
      this.fail(e as Error);
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  /** The whole answer when it fits a snapshot; undefined when it is larger (output.md holds it). */
  exact(): Buffer | undefined {
    if (this.total > MAX_SNAPSHOT_BYTES) return undefined;
    return this.kept.length === 1 ? this.kept[0]! : Buffer.concat(this.kept);
  }

  /** The answer, or for one too large to snapshot its end (whole UTF-8 characters only). */
  tail(): { text: string; whole: boolean } {
    const exact = this.exact();
    if (exact) return { text: exact.toString("utf8"), whole: true };
    let buf = Buffer.concat(this.kept);
    buf = buf.subarray(Math.max(0, buf.length - ANSWER_TAIL_BYTES));
    let i = 0;
    while (i < buf.length && i < 4 && (buf[i]! & 0xc0) === 0x80) i++;
    return { text: buf.subarray(i).toString("utf8"), whole: false };
  }

  private keep(buf: Buffer): void {
    this.kept.push(buf);
    this.keptBytes += buf.length;
    if (this.total <= MAX_SNAPSHOT_BYTES) return;
    // Too large for a snapshot now: only the end is still of use.
    while (this.kept.length > 1 && this.keptBytes - this.kept[0]!.length >= ANSWER_TAIL_BYTES) {
      this.keptBytes -= this.kept.shift()!.length;
    }
    if (this.keptBytes > 2 * ANSWER_TAIL_BYTES) {
      const last = Buffer.concat(this.kept);
      const cut = Buffer.from(last.subarray(last.length - ANSWER_TAIL_BYTES));
      this.kept = [cut];
      this.keptBytes = cut.length;
    }
  }

  private writeAll(data: Buffer): void {
    let off = 0;
    // write(2) may write less than asked (a nearly full disk): the rest is retried, which then fails loudly.
    while (off < data.length) {
      const n = fs.writeSync(this.fd!, data, off, data.length - off, this.pos);
      off += n;
      this.pos += n;
    }
  }

  private fail(e: Error): void {
    if (this.fd !== undefined) {
      try {
        fs.closeSync(this.fd);
      } catch {}
    }
    this.fd = undefined;
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.error) {
      this.error = new Error(`cannot write ${path.basename(this.file)}: ${e.message}`, { cause: e });
      this.onError(this.error);
    }
  }
}
