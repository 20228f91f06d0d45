/** A small private tmpfs for disk-full tests (needs root; a refused mount fails the test, never skips it). */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";

export interface SmallDisk {
  dir: string;
  /** Fills the disk until a write fails, then frees `leaveBytes` (rounded to pages by tmpfs). */
  fill(leaveBytes?: number): void;
  /** Removes the filler: the disk has room again. */
  free(): void;
  unmount(): Promise<void>;
}

export async function mountSmallDisk(prefix: string, size = "2m"): Promise<SmallDisk> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const r = await execa("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", dir], {
    reject: false,
  });
  if (r.exitCode !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`cannot mount a tmpfs for the disk-full test (needs root): ${r.stderr}`);
  }
  const filler = path.join(dir, "filler");
  return {
    dir,
    fill(leaveBytes = 0) {
      const fd = fs.openSync(filler, "a");
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOSPC") throw e;
      } finally {
        fs.closeSync(fd);
      }
      // A partial last chunk may have filled the disk up to the byte: round down to whole pages, then free some.
      const size = fs.statSync(filler).size;
      fs.truncateSync(filler, Math.max(0, Math.floor(size / 4096) * 4096 - leaveBytes));
    },
    free() {
      fs.rmSync(filler, { force: true });
    },
    async unmount() {
      await execa("umount", ["-l", dir], { reject: false });
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Every `*.tmp` file below `dir` (temp files a failed atomic write left behind). */
export function tempFilesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".tmp")) out.push(p);
    }
  };
  walk(dir);
  return out;
}
