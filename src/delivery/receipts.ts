import { readAllRecords } from "../artifacts/reader.js";
import { isStorageFailure, storageError } from "../base/storage-errors.js";
import { appendJsonLines } from "../util/fsx.js";

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
  const ts = new Date().toISOString();
  appendJsonLines(
    file,
    recordIds.map((recordId): Receipt => ({ v: 1, recordId, ts, by })),
  );
}

/**
 * appendReceipts for a read that must not fail where the state root cannot be written (a full disk, a
 * read-only mount): the result is still given; this says why it was not marked as delivered.
 */
export function appendReceiptsIfWritable(file: string, recordIds: string[], by: string): string | undefined {
  try {
    appendReceipts(file, recordIds, by);
    return undefined;
  } catch (e) {
    if (!isStorageFailure(e)) throw e;
    return `${(storageError(e) as Error).message}; not marked as delivered, so it may be delivered again`;
  }
}

/** The set of consumed record ids (a torn or malformed line is skipped). */
export function readReceipts(file: string): Set<string> {
  return new Set(readAllRecords<Receipt>(file).map((r) => r.recordId));
}
