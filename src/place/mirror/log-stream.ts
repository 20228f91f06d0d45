/**
 * An append-only NDJSON log streamed from the far side to the mirror from a byte cursor: the child's event
 * log, and its conversation. Only whole lines cross (a torn record waits for its LF); the mirror's copy must
 * be a prefix of the far one (its size and the sha256 of its last 4 KiB say so), or the link is refused.
 */
import * as fs from "node:fs";
import { openRegular } from "../../util/safe-read.js";
import { tailSha } from "./paths.js";
import { CHUNK, type FrameWriter, ProtocolError } from "./protocol.js";

export class LogSender {
  /** Offset just past the last byte sent. */
  cursor = 0;

  constructor(
    readonly file: string,
    private readonly frame: "events" | "session",
    private readonly label: string,
  ) {}

  /** The log's size now (0 when it is not there). */
  end(): number {
    return fs.lstatSync(this.file, { throwIfNoEntry: false })?.size ?? 0;
  }

  /** Starts after the mirror's copy, which must be a prefix of this log. */
  resume(mirror: { size: number; tail: string }): void {
    const far = this.end();
    if (mirror.size > far)
      throw new ProtocolError(
        `the mirror's ${this.label} (${mirror.size} bytes) is longer than the far side's (${far})`,
      );
    if (tailSha(this.file, mirror.size) !== mirror.tail)
      throw new ProtocolError(
        `the mirror's ${this.label} differs from the far side's before byte ${mirror.size}`,
      );
    this.cursor = mirror.size;
  }

  /** Sends the bytes from the cursor up to the last LF before `end`. */
  async send(out: FrameWriter, end: number, stopped: () => boolean): Promise<void> {
    if (end < this.cursor)
      throw new ProtocolError(
        `${this.label} on the far side shrank to ${end} bytes, below the mirror's ${this.cursor}`,
      );
    if (end === this.cursor) return;
    const { fd } = openRegular(this.file);
    try {
      syncBeforeSending(fd);
      while (this.cursor < end && !stopped()) {
        const want = Math.min(CHUNK, end - this.cursor);
        const buf = Buffer.allocUnsafe(want);
        const got = fs.readSync(fd, buf, 0, want, this.cursor);
        const lf = buf.subarray(0, got).lastIndexOf(0x0a);
        // A run of a whole chunk with no LF is no record (they are ≤ 1 MiB with their LF): it goes as it is.
        const take = lf >= 0 ? lf + 1 : got === CHUNK ? got : 0;
        if (take === 0) break;
        await out.send({ t: this.frame, at: this.cursor }, buf.subarray(0, take));
        this.cursor += take;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/**
 * Makes what is about to cross durable first. A host writes the records that only narrate a turn without an
 * fsync each (artifacts/log.ts): were they sent as they are, a crash of the far machine could take from its log
 * bytes the mirror already holds, and the mirror would then no longer be a prefix of it (the link refused for
 * good). One fsync a pass covers them all; on a log whose last record was fsync'd already it finds nothing to do.
 * A filesystem that cannot fsync (EINVAL) has nothing more to give: the bytes go as they are.
 */
function syncBeforeSending(fd: number): void {
  try {
    fs.fsyncSync(fd);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EINVAL") throw e;
  }
}
