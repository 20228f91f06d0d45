/**
 * Reading an agent CLI's own transcript (Claude Code's session JSONL, Codex's rollout, Gemini's chat recording)
 * for a TUI turn's answer and usage. The path comes from a hook payload: it is opened like an artifact
 * (util/safe-read.ts: no symlink at the last component, a regular file only, so a FIFO never blocks the host)
 * and read bounded.
 */
import * as fs from "node:fs";
import { openRegular } from "../../util/safe-read.js";
import { obj } from "../common/shared.js";

const MAX_BYTES = 64 * 1024 * 1024;

/** The file from `fromByte` on, at most its last `maxBytes`; "" when it cannot be read safely. */
export function readTranscript(file: string, fromByte: number, maxBytes = MAX_BYTES): string {
  try {
    const { fd, size } = openRegular(file);
    try {
      const start = Math.max(fromByte, size - maxBytes);
      const buf = Buffer.alloc(Math.max(0, size - start));
      fs.readSync(fd, buf, 0, buf.length, start);
      return buf.toString("utf8");
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return "";
  }
}

/** The JSON records of a JSONL text; a line that does not parse (cut by a bounded read, or still being written) is skipped. */
export function jsonRecords(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const l of text.split("\n")) {
    try {
      out.push(obj(JSON.parse(l)));
    } catch {
      // The next read has it whole.
    }
  }
  return out;
}
