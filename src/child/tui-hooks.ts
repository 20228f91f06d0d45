/**
 * The hook file of a child in mode tui (`runner/tui-hooks.ndjson`): the CLI's hooks append one JSON line per
 * record (runners/tui/hook.ts, Pi's extension); the host reads what is new from a byte cursor whenever the
 * folder may have changed (fs.watch hint + poll, as dir-watch.ts), whole lines only.
 */
import * as fs from "node:fs";
import type { HookLine } from "../runners/tui/types.js";

export class HookFileReader {
  private cursor = 0;
  private partial: Buffer = Buffer.alloc(0);

  constructor(readonly file: string) {}

  /** Records of an earlier TUI process are history: reading starts at the file's end as it is now. */
  skipToEnd(): void {
    try {
      this.cursor = fs.statSync(this.file).size;
    } catch {
      this.cursor = 0;
    }
    this.partial = Buffer.alloc(0);
  }

  /** The records appended since the last read (a line not yet whole waits for the next). */
  read(): HookLine[] {
    let fd: number;
    try {
      fd = fs.openSync(this.file, "r");
    } catch {
      return [];
    }
    let chunk: Buffer;
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= this.cursor) return [];
      chunk = Buffer.alloc(size - this.cursor);
      fs.readSync(fd, chunk, 0, chunk.length, this.cursor);
      this.cursor = size;
    } finally {
      fs.closeSync(fd);
    }
    // Bytes until a line is whole: a read may end inside a record (and inside a character).
    let buf = Buffer.concat([this.partial, chunk]);
    const out: HookLine[] = [];
    for (let nl = buf.indexOf(0x0a); nl >= 0; nl = buf.indexOf(0x0a)) {
      const text = buf.subarray(0, nl).toString("utf8");
      buf = buf.subarray(nl + 1);
      try {
        const o = JSON.parse(text) as HookLine;
        if (o && typeof o.event === "string") out.push(o);
      } catch {
        // A torn or foreign line: skipped, the next record still counts.
      }
    }
    this.partial = Buffer.from(buf);
    return out;
  }
}
