/** A file system failure (disk full, read-only, no permission) in words, as a MusterError with code `storage`. */
import { MusterError } from "./errors.js";

const WHY: Record<string, string> = {
  ENOSPC: "the disk is full",
  EDQUOT: "the disk quota is used up",
  EROFS: "the file system is read-only",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EMFILE: "too many open files in this process",
  ENFILE: "too many open files on this system",
  EIO: "an I/O error from the disk",
};

/** Whether `e` is one of the file system failures `storageError` words. */
export function isStorageFailure(e: unknown): e is NodeJS.ErrnoException {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && code in WHY;
}

/**
 * `e` as a storage MusterError naming the cause and the path (`cannot write …: the disk is full (ENOSPC)`),
 * or `e` itself when it is no such failure (a MusterError stays as it is).
 */
export function storageError(e: unknown): unknown {
  if (e instanceof MusterError || !isStorageFailure(e)) return e;
  const verb = e.syscall === "open" || e.syscall === "scandir" || e.syscall === "read" ? "use" : "write";
  const where = e.path ? ` ${e.path}` : "";
  return new MusterError("storage", `cannot ${verb}${where}: ${WHY[e.code!]} (${e.code})`, { cause: e });
}

const FULL: Record<string, string> = { ENOSPC: "is full", EDQUOT: "is over its quota" };

/** The errno code of a full disk (ENOSPC, EDQUOT) in `e` or its causes, or in the message of one that lost it. */
export function diskFullCode(e: unknown): string | undefined {
  for (let cur = e, depth = 0; cur instanceof Error && depth < 8; cur = cur.cause, depth++) {
    const code = (cur as NodeJS.ErrnoException).code;
    if (code && code in FULL) return code;
    const named = /\b(ENOSPC|EDQUOT)\b/.exec(cur.message)?.[1];
    if (named) return named;
  }
  return undefined;
}

/** A full disk in words, naming the directory it holds: `the disk holding <dir> is full (ENOSPC)`. */
export function diskFullWords(e: unknown, dir: string): string | undefined {
  const code = diskFullCode(e);
  return code ? `the disk holding ${dir} ${FULL[code]} (${code})` : undefined;
}
