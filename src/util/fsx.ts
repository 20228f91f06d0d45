import * as fs from "node:fs";
import * as path from "node:path";
import { randomBytes } from "./random.js";
import { READ_CAPS, readJsonBounded, readJsonBoundedIfExists } from "./safe-read.js";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

export function ensureDir(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  } catch (e) {
    // A recursive mkdir on a read-only (or full) file system says ENOENT: one level at a time says why.
    if ((e as NodeJS.ErrnoException).code !== "ENOENT" || dir === path.dirname(dir)) throw e;
    if (!fs.existsSync(path.dirname(dir))) ensureDir(path.dirname(dir));
    fs.mkdirSync(dir, { mode: DIR_MODE });
  }
}

/**
 * Opens a file for writing from empty without following a symlink: whatever is at the path (a symlink planted
 * there, an old file) is unlinked — the link, never its target — and a new file is created exclusively, so a
 * link planted again in between fails the open (EEXIST) instead of being followed.
 */
export function openFreshNoFollow(file: string, mode = FILE_MODE): number {
  fs.rmSync(file, { force: true });
  const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = fs.constants;
  return fs.openSync(file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/** A whole file written through openFreshNoFollow (no fsync: for files rewritten each time, not records). */
export function writeFileNoFollow(file: string, data: string | Uint8Array, mode = FILE_MODE): void {
  const fd = openFreshNoFollow(file, mode);
  try {
    fs.writeFileSync(fd, data);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Crash-safe write: temp file in the same dir, fsync, rename over the target, fsync the dir. The rename
 * replaces a symlink at the target rather than writing through it. `durable: false` skips both fsyncs (a
 * reader still never sees half a file) for a file whose loss in a crash of the machine costs nothing.
 */
export function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  mode = FILE_MODE,
  durable = true,
): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = fs.openSync(tmp, "wx", mode);
  // Any failure (a full disk fails the write, not the open) removes the temp file: none is left behind.
  try {
    try {
      fs.writeFileSync(fd, data);
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  if (durable) fsyncDir(dir);
}

export function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, "r");
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic.
  }
}

export function writeJsonAtomic(file: string, value: unknown): void {
  writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** A JSON state file, read safely (no symlink, regular files only, at most maxBytes: see safe-read.ts). */
export function readJson<T>(file: string, maxBytes: number = READ_CAPS.stateJson): T {
  return readJsonBounded<T>(file, maxBytes);
}

export function readJsonIfExists<T>(file: string, maxBytes: number = READ_CAPS.stateJson): T | undefined {
  return readJsonBoundedIfExists<T>(file, maxBytes);
}

export function exists(p: string): boolean {
  try {
    fs.accessSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Appends JSON lines durably: one write, then fsync; the file is created 0600. A writer killed mid-append
 * leaves a line without LF: it is ended first, so the new lines start clean (readers skip the torn one).
 */
export function appendJsonLines(file: string, values: unknown[]): void {
  if (values.length === 0) return;
  const fd = openAppend(file);
  try {
    const torn = endsUnterminated(fd);
    appendAll(fd, `${torn ? "\n" : ""}${values.map((v) => JSON.stringify(v)).join("\n")}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens a log for appending (created 0600): never through a symlink (ELOOP), and only a regular file, so a
 * FIFO or device planted in its place is refused rather than written to. Readable too, to check its last byte.
 */
export function openAppend(file: string): number {
  const fd = fs.openSync(
    file,
    fs.constants.O_RDWR |
      fs.constants.O_APPEND |
      fs.constants.O_CREAT |
      fs.constants.O_NOFOLLOW |
      fs.constants.O_NONBLOCK,
    FILE_MODE,
  );
  if (!fs.fstatSync(fd).isFile()) {
    fs.closeSync(fd);
    throw new Error(`refusing to append to ${file}: not a regular file`);
  }
  return fd;
}

/** Whether a file open at fd ends without LF (a writer died mid-line or wrote junk): the next record needs one first. */
export function endsUnterminated(fd: number): boolean {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

/** Writes all of `data` at the descriptor's position (a write may take only part of it). */
export function writeAll(fd: number, data: Uint8Array): void {
  for (let off = 0; off < data.length; ) off += fs.writeSync(fd, data, off, data.length - off);
}

/**
 * Appends all of `data` to the file open at fd (O_APPEND) and fsyncs (unless `sync` is false: the bytes then
 * reach the disk with the file's next fsync, which flushes all of it). write(2) on a nearly full disk first
 * writes what fits and returns short: the rest is retried, which then fails — and the file is cut back to its
 * size before, so no partial record is left to pass for a whole one. The error is thrown.
 */
export function appendAll(fd: number, data: string | Uint8Array, sync = true): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const size = fs.fstatSync(fd).size;
  try {
    writeAll(fd, buf);
    if (sync) fs.fsyncSync(fd);
  } catch (e) {
    try {
      fs.ftruncateSync(fd, size);
      fs.fsyncSync(fd);
    } catch {}
    throw e;
  }
}

/**
 * Drops `value` as a new JSON file into `dir` under a unique, time-ordered name (0600, temp + rename: a reader
 * never sees half of it). Returns the file's path; throws when it cannot be written.
 */
export function dropJsonFile(dir: string, value: unknown): string {
  const name = `${Date.now().toString().padStart(15, "0")}-${randomBytes(4).toString("hex")}.json`;
  const tmp = path.join(dir, `.${name}.tmp`);
  try {
    fs.writeFileSync(tmp, JSON.stringify(value), { mode: 0o600 });
    fs.renameSync(tmp, path.join(dir, name));
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  return path.join(dir, name);
}
