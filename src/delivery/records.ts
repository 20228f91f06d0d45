import type {
  CompletionEvent,
  CompletionStatus,
  OutputError,
  OutputRef,
  ProviderError,
} from "../artifacts/events.js";

/** A terminal completion as the parent is told of it: statuses and references, never the output itself. */
export interface DeliveryRecord {
  /** Deterministic: the same completion always has the same id (`<childId>:<turnId>`). */
  recordId: string;
  id: string;
  agent: string;
  /** The child's name (`spawn --name`), if it has one. */
  name?: string;
  turnId: string;
  status: CompletionStatus;
  reason?: string;
  /** The immutable snapshot, by absolute path, with its size and hash. */
  output?: OutputRef & { file: string };
  outputError?: OutputError;
  /** The provider error the turn failed on (a quota or a refused credential pauses the tree). */
  providerError?: ProviderError;
  completedAt: string;
}

export const recordIdOf = (childId: string, turnId: string): string => `${childId}:${turnId}`;

/** The delivery record of one completion. */
export function toRecord(
  childId: string,
  agent: string,
  artifactDir: string,
  c: CompletionEvent,
  name?: string,
): DeliveryRecord {
  return {
    recordId: recordIdOf(childId, c.turnId),
    id: childId,
    agent,
    ...(name !== undefined ? { name } : {}),
    turnId: c.turnId,
    status: c.status,
    ...(c.reason ? { reason: c.reason } : {}),
    ...(c.output ? { output: { ...c.output, file: `${artifactDir}/${c.output.path}` } } : {}),
    ...(c.outputError ? { outputError: c.outputError } : {}),
    ...(c.providerError ? { providerError: c.providerError } : {}),
    completedAt: c.ts,
  };
}

/** Bounds of one manifest (DESIGN §7): compact enough to hand to a model in one piece. */
export const MANIFEST_MAX_RECORDS = 128;
export const MANIFEST_MAX_BYTES = 32 * 1024;

export interface Manifest {
  records: DeliveryRecord[];
  /** Pending records that did not fit; they come in the next manifest. */
  more: number;
}

/** The oldest pending records that fit the bounds, in completion order. */
export function buildManifest(pending: DeliveryRecord[]): Manifest {
  const sorted = [...pending].sort(
    (a, b) => a.completedAt.localeCompare(b.completedAt) || a.recordId.localeCompare(b.recordId),
  );
  const records: DeliveryRecord[] = [];
  let bytes = 64;
  for (const r of sorted) {
    const size = Buffer.byteLength(JSON.stringify(r)) + 1;
    if (records.length >= MANIFEST_MAX_RECORDS || bytes + size > MANIFEST_MAX_BYTES) break;
    records.push(r);
    bytes += size;
  }
  return { records, more: sorted.length - records.length };
}
