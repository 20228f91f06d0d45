import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { writeFileAtomic } from "../util/fsx.js";
import { openRegular, readFileBounded } from "../util/safe-read.js";
import { sha256Hex as plainSha256Hex } from "../util/sha256.js";
import type { OutputError, OutputRef } from "./events.js";

export const MAX_SNAPSHOT_BYTES = 1024 * 1024;

export const SNAPSHOT_PATH = /^outputs\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.md$/;

/** Up to this many bytes (most answers) are hashed in plain JS: reading one back then loads no node:crypto. */
const PLAIN_HASH_MAX = 2048;

export const sha256Hex = (data: string | Uint8Array): string =>
  typeof data !== "string" && data.length <= PLAIN_HASH_MAX
    ? plainSha256Hex(data)
    : createHash("sha256").update(data).digest("hex");

/** Why an answer of `bytes` has no snapshot (output.md keeps it). */
export const outputTooLarge = (bytes: number): OutputError => ({
  code: "output_too_large",
  message: `output of ${bytes} bytes exceeds the ${MAX_SNAPSHOT_BYTES}-byte snapshot limit; see output.md`,
  bytes,
});

/**
 * Writes the turn's answer as the immutable outputs/<eventId>.md (temp + fsync + rename),
 * or reports why not (too large: the staging output.md keeps it for manual inspection).
 */
export function snapshotOutput(
  artifactDir: string,
  eventId: string,
  data: Buffer,
): { output: OutputRef } | { outputError: OutputError } {
  if (data.length > MAX_SNAPSHOT_BYTES) return { outputError: outputTooLarge(data.length) };
  const rel = `outputs/${eventId}.md`;
  try {
    writeFileAtomic(path.join(artifactDir, rel), data);
  } catch (e) {
    return {
      outputError: { code: "output_unreadable", message: `cannot write ${rel}: ${(e as Error).message}` },
    };
  }
  return { output: { path: rel, bytes: data.length, sha256: sha256Hex(data) } };
}

/**
 * Reads a snapshot back and checks it against its recorded size and hash. The file must be a regular file
 * (no symlink, FIFO or device) of at most its recorded size (never above the snapshot limit), checked before
 * any byte is read: a hostile file is refused (MusterError "integrity"), never read to its end.
 */
export function readSnapshot(artifactDir: string, ref: OutputRef): { text: string; intact: boolean } {
  checkSnapshotPath(ref);
  const cap = Number.isSafeInteger(ref.bytes) ? Math.min(Math.max(0, ref.bytes), MAX_SNAPSHOT_BYTES) : 0;
  const data = readFileBounded(path.join(artifactDir, ref.path), cap);
  return { text: data.toString("utf8"), intact: data.length === ref.bytes && sha256Hex(data) === ref.sha256 };
}

/** The ref comes from the events file: only the shape this module writes may become a path. */
function checkSnapshotPath(ref: OutputRef): void {
  if (typeof ref.path !== "string" || !SNAPSHOT_PATH.test(ref.path))
    throw new MusterError(
      "integrity",
      `snapshot path ${JSON.stringify(ref.path)} is not outputs/<eventId>.md`,
    );
}

/** The first `maxBytes` of a snapshot, for a preview: no symlink or FIFO is followed, never more is read. */
export function snapshotHead(artifactDir: string, ref: OutputRef, maxBytes: number): Buffer {
  checkSnapshotPath(ref);
  const { fd, size } = openRegular(path.join(artifactDir, ref.path));
  try {
    const buf = Buffer.alloc(Math.min(size, maxBytes));
    const got = fs.readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}
