import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../util/fsx.js";
import type { OutputError, OutputRef } from "./events.js";

export const MAX_SNAPSHOT_BYTES = 1024 * 1024;

export const sha256Hex = (data: string | Uint8Array): string =>
  createHash("sha256").update(data).digest("hex");

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

/** Reads a snapshot back and checks it against its recorded size and hash. */
export function readSnapshot(artifactDir: string, ref: OutputRef): { text: string; intact: boolean } {
  const data = fs.readFileSync(path.join(artifactDir, ref.path));
  return { text: data.toString("utf8"), intact: data.length === ref.bytes && sha256Hex(data) === ref.sha256 };
}
