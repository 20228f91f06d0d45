import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

export function ensureDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}

/** Crash-safe write: temp file in the same dir, fsync, rename over the target, fsync the dir. */
export function writeFileAtomic(file: string, data: string | Uint8Array, mode = FILE_MODE): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  const fd = fs.openSync(tmp, "wx", mode);
  // Any failure (a full disk fails the write, not the open) removes the temp file: none is left behind.
  try {
    try {
      fs.writeFileSync(fd, data);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dir);
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

export function readJson<T>(file: string): T {
  return JSON.parse(fs.readFileSync(file, "utf8")) as T;
}

export function readJsonIfExists<T>(file: string): T | undefined {
  try {
    return readJson<T>(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
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
  const fd = fs.openSync(file, fs.constants.O_RDWR | fs.constants.O_APPEND | fs.constants.O_CREAT, FILE_MODE);
  try {
    const size = fs.fstatSync(fd).size;
    let torn = false;
    if (size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, size - 1);
      torn = last[0] !== 0x0a;
    }
    appendAll(fd, `${torn ? "\n" : ""}${values.map((v) => JSON.stringify(v)).join("\n")}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Appends all of `data` to the file open at fd (O_APPEND) and fsyncs. write(2) on a nearly full disk first
 * writes what fits and returns short: the rest is retried, which then fails — and the file is cut back to its
 * size before, so no partial record is left to pass for a whole one. The error is thrown.
 */
export function appendAll(fd: number, data: string | Uint8Array): void {
  const buf = typeof data === "string" ? Buffer.from(data, "utf8") : data;
  const size = fs.fstatSync(fd).size;
  try {
    for (let off = 0; off < buf.length; ) off += fs.writeSync(fd, buf, off, buf.length - off);
    fs.fsyncSync(fd);
  } catch (e) {
    try {
      fs.ftruncateSync(fd, size);
      fs.fsyncSync(fd);
    } catch {}
    throw e;
  }
}
