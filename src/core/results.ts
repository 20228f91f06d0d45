import type {
  CompletionEvent,
  CompletionStatus,
  OutputError,
  OutputRef,
  Usage,
} from "../artifacts/events.js";
import { readSnapshot } from "../artifacts/snapshot.js";
import type { LoadedChild } from "./children.js";
import { MusterError } from "./errors.js";
import { resumable } from "./state.js";

/** One settled turn as front ends report it. */
export interface TurnResult {
  id: string;
  agent: string;
  turnId: string;
  status: CompletionStatus;
  reason?: string;
  exitCode?: number | null;
  durationMs?: number;
  usage?: Usage;
  output?: OutputRef;
  outputError?: OutputError;
  artifactDir: string;
  /** Whether the child can be continued (`muster spawn --resume`): some turn of it completed with a result. */
  resumable: boolean;
  /** The snapshot's text, when asked for and available. */
  text?: string;
}

export function toResult(c: LoadedChild, completion: CompletionEvent, withText: boolean): TurnResult {
  const r: TurnResult = {
    id: c.entry.id,
    agent: c.entry.agent,
    turnId: completion.turnId,
    status: completion.status,
    artifactDir: c.files.dir,
    resumable: resumable(c.state),
    ...(completion.reason ? { reason: completion.reason } : {}),
    ...(completion.exitCode !== undefined ? { exitCode: completion.exitCode } : {}),
    ...(completion.durationMs !== undefined ? { durationMs: completion.durationMs } : {}),
    ...(completion.usage ? { usage: completion.usage } : {}),
    ...(completion.output ? { output: completion.output } : {}),
    ...(completion.outputError ? { outputError: completion.outputError } : {}),
  };
  if (withText && completion.output) {
    const snap = readSnapshot(c.files.dir, completion.output);
    if (!snap.intact) {
      throw new MusterError(
        "integrity",
        `snapshot ${completion.output.path} of child ${c.entry.id} does not match its recorded sha256`,
      );
    }
    r.text = snap.text;
  }
  return r;
}

/** Exit code of an outcome (one table: README and --help). */
export const STATUS_EXIT: Record<CompletionStatus, number> = {
  completed: 0,
  errored: 1,
  cancelled: 3,
  exhausted: 4,
  incomplete: 4,
  lost: 5,
};
