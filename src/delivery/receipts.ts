import * as fs from "node:fs";
import { readAllRecords } from "../artifacts/reader.js";
import { FILE_MODE } from "../util/fsx.js";

/** One consumed delivery record: once written, that completion is not delivered again. */
export interface Receipt {
  v: 1;
  recordId: string;
  ts: string;
  /** What consumed it: a result read, a wait, the inbox, an MCP call. */
  by: string;
}

/** Appends receipts durably (one write + fsync): a receipt counts only once it is on disk. */
export function appendReceipts(file: string, recordIds: string[], by: string): void {
  if (recordIds.length === 0) return;
  const ts = new Date().toISOString();
  const text = recordIds
    .map((recordId) => JSON.stringify({ v: 1, recordId, ts, by } satisfies Receipt))
    .join("\n");
  const fd = fs.openSync(
    file,
    fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT,
    FILE_MODE,
  );
  try {
    // A torn last line from a crashed writer would swallow our first record: start on a fresh line.
    const size = fs.fstatSync(fd).size;
    fs.writeSync(fd, `${size > 0 ? "\n" : ""}${text}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** The set of consumed record ids (a torn or malformed line is skipped). */
export function readReceipts(file: string): Set<string> {
  return new Set(readAllRecords<Receipt>(file).map((r) => r.recordId));
}
