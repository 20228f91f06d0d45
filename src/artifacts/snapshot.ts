import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../util/fsx.js";
import type { OutputError, OutputRef } from "./events.js";

export const MAX_SNAPSHOT_BYTES = 1024 * 1024;

export const sha256Hex = (data: string | Uint8Array): string =>
  createHash("sha256").update(data).digest("hex");

/**
 * Copies the turn's staging output into the immutable outputs/<eventId>.md, atomically,
 * or reports why it could not (too large: the staging file stays for manual inspection).
 */
export function snapshotOutput(
  artifactDir: string,
  eventId: string,
  stagingFile: string,
): { output: OutputRef } | { outputError: OutputError } {
  let size: number;
  try {
    size = fs.statSync(stagingFile).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") {
      return { outputError: { code: "output_unreadable", message: (e as Error).message } };
    }
    size = 0;
  }
  if (size > MAX_SNAPSHOT_BYTES) {
    return {
      outputError: {
        code: "output_too_large",
        message: `output of ${size} bytes exceeds the ${MAX_SNAPSHOT_BYTES}-byte snapshot limit; see output.md`,
        bytes: size,
      },
    };
  }
  const data = size === 0 ? Buffer.alloc(0) : fs.readFileSync(stagingFile);
  const rel = `outputs/${eventId}.md`;
  writeFileAtomic(path.join(artifactDir, rel), data);
  return { output: { path: rel, bytes: data.length, sha256: sha256Hex(data) } };
}

/** Reads a snapshot back and checks it against its recorded size and hash. */
export function readSnapshot(artifactDir: string, ref: OutputRef): { text: string; intact: boolean } {
  const data = fs.readFileSync(path.join(artifactDir, ref.path));
  return { text: data.toString("utf8"), intact: data.length === ref.bytes && sha256Hex(data) === ref.sha256 };
}
