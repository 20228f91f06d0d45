import * as fs from "node:fs";
import { openRegular } from "./safe-read.js";

const CHUNK_BYTES = 64 * 1024;

/**
 * The complete lines of an NDJSON file, last first, read in chunks from its end: a question that only the
 * newest records answer (a conversation's latest settings) then costs the same however long the file grew.
 * The rules are the forward reader's: a last line with no LF yet is still being written and is not given, an
 * empty line is not a line, and one longer than maxLineBytes is passed over without being held. A missing file
 * has no lines; a symlink or a non-file is refused (safe-read's openRegular).
 */
export function* linesFromEnd(
  file: string,
  maxLineBytes: number,
  chunkBytes = CHUNK_BYTES,
): Generator<Buffer> {
  let opened: { fd: number; size: number };
  try {
    opened = openRegular(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw e;
  }
  const { fd, size } = opened;
  try {
    // The parts of the line being gathered (it continues to the right of what is read next), in file order.
    let parts: Buffer[] = [];
    let gathered = 0;
    let tooLong = false;
    // Until the last LF is found, what is read belongs to an unfinished line.
    let complete = false;
    const take = (part: Buffer): void => {
      if (tooLong || part.length === 0) return;
      gathered += part.length;
      if (gathered > maxLineBytes) {
        tooLong = true;
        parts = [];
      } else parts.unshift(part);
    };
    const line = (): Buffer | undefined => {
      const whole = tooLong || gathered === 0 ? undefined : Buffer.concat(parts, gathered);
      parts = [];
      gathered = 0;
      tooLong = false;
      return whole;
    };
    for (let end = size; end > 0; ) {
      const start = Math.max(0, end - chunkBytes);
      const chunk = Buffer.allocUnsafe(end - start);
      // Short only when the file shrank under us (it was cut or replaced): what is read is then no longer one file.
      if (fs.readSync(fd, chunk, 0, chunk.length, start) < chunk.length) return;
      let right = chunk.length;
      for (let nl = chunk.lastIndexOf(0x0a, right - 1); nl >= 0; nl = chunk.lastIndexOf(0x0a, right - 1)) {
        if (complete) {
          take(chunk.subarray(nl + 1, right));
          const whole = line();
          if (whole) yield whole;
        }
        complete = true;
        right = nl;
        if (nl === 0) break;
      }
      if (complete) take(chunk.subarray(0, right));
      end = start;
    }
    const first = complete ? line() : undefined;
    if (first) yield first;
  } finally {
    fs.closeSync(fd);
  }
}
