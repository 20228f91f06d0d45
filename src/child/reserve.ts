import * as fs from "node:fs";
import { openFreshNoFollow } from "../util/fsx.js";

const RESERVE_BYTES = 32 * 1024;

/**
 * A little disk space the host holds back (a file of zeros in the artifact dir), given up when a write
 * fails for a full disk, so the turn's end — the conversation line, the completion — can still be recorded.
 */
export class DiskReserve {
  constructor(
    readonly file: string,
    private readonly bytes = RESERVE_BYTES,
  ) {}

  /** Best effort: on a disk too full to hold it there is simply no reserve. */
  hold(): void {
    try {
      const st = fs.lstatSync(this.file);
      if (st.isFile() && st.size === this.bytes) return;
    } catch {}
    try {
      // Zeros written through a planted symlink would destroy a file elsewhere: replace it instead.
      const fd = openFreshNoFollow(this.file);
      try {
        // Zeros, written (not a hole from truncate): the filesystem allocates the blocks now.
        if (fs.writeSync(fd, Buffer.alloc(this.bytes)) !== this.bytes) throw new Error("short write");
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      this.release();
    }
  }

  release(): void {
    try {
      fs.rmSync(this.file, { force: true });
    } catch {}
  }
}
