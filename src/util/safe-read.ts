import * as fs from "node:fs";
import { MusterError } from "../base/errors.js";

// O_NOFOLLOW: a symlink planted in place of an artifact is refused (ELOOP), never followed to /dev/zero or
// a file elsewhere. O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; fstat then
// refuses it. Neither changes how a regular file is read.
const OPEN_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK;

export interface ReadOptions {
  /**
   * Follow a symlink at the last component: for files the user names or keeps (a config or profile linked
   * from a dotfiles repo, `muster done --file`). What it points to must still be a regular file.
   */
  follow?: boolean;
}

/** Caps for whole-file reads of state files (each a bound on memory, far above any legitimate file). */
export const READ_CAPS = {
  /** meta.json, budget.json, slot tickets, workspace and group files: a few hundred bytes each. */
  smallJson: 1024 * 1024,
  /** registry.json grows ~0.5 KB per child until gc; env.json holds a whole environment. */
  stateJson: 64 * 1024 * 1024,
} as const;

/** What a non-regular file is, for an error ("a FIFO", "a directory", …). */
export function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isCharacterDevice()) return "a character device";
  if (st.isBlockDevice()) return "a block device";
  if (st.isSocket()) return "a socket";
  if (st.isDirectory()) return "a directory";
  return "not a regular file";
}

const refuse = (file: string, why: string, cause?: unknown): MusterError =>
  new MusterError(
    "integrity",
    `refusing to read ${file}: ${why}`,
    cause !== undefined ? { cause } : undefined,
  );

/**
 * Opens a file for reading only if it is a regular file reached without following a symlink at its last
 * component; returns the fd, its size and its inode. ENOENT (and other errors of the open) are thrown as they are.
 */
export function openRegular(file: string, opts: ReadOptions = {}): { fd: number; size: number; ino: number } {
  let fd: number;
  try {
    fd = fs.openSync(file, opts.follow ? OPEN_FLAGS & ~fs.constants.O_NOFOLLOW : OPEN_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOOP") throw refuse(file, "it is a symbolic link", e);
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw refuse(file, `it is ${kindOf(st)}`);
    return { fd, size: st.size, ino: st.ino };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/**
 * Reads a whole regular file of at most maxBytes (refused before reading if larger). Never follows a
 * symlink, never blocks on a FIFO, never reads more than the size fstat reported (a file growing meanwhile
 * is cut there). Hostile files raise MusterError("integrity") naming the file and the reason.
 */
export function readFileBounded(file: string, maxBytes: number, opts: ReadOptions = {}): Buffer {
  const { fd, size } = openRegular(file, opts);
  try {
    if (size > maxBytes) throw refuse(file, `it is ${size} bytes, more than the ${maxBytes}-byte limit`);
    const buf = Buffer.allocUnsafe(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, buf, got, size - got, got);
      if (n <= 0) break; // shrank while reading: what is there is all there is
      got += n;
    }
    return got === size ? buf : buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

/** readFileBounded, parsed as JSON; a parse error names the file. */
export function readJsonBounded<T>(file: string, maxBytes: number): T {
  const text = readFileBounded(file, maxBytes).toString("utf8");
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new MusterError("integrity", `${file} is not valid JSON: ${(e as Error).message}`, { cause: e });
  }
}

/** readJsonBounded, or undefined when the file does not exist. */
export function readJsonBoundedIfExists<T>(file: string, maxBytes: number): T | undefined {
  try {
    return readJsonBounded<T>(file, maxBytes);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw e;
  }
}
