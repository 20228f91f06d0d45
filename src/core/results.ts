import type {
  CompletionEvent,
  CompletionStatus,
  OutputError,
  OutputRef,
  ProviderError,
  Usage,
  Verified,
} from "../artifacts/events.js";
import { MusterError, type NextStep } from "../base/errors.js";
import { appendReceiptsIfWritable } from "../delivery/receipts.js";
import { recordIdOf } from "../delivery/records.js";
import { type IsolationResult, isolationResult } from "../isolation/result.js";
import type { LoadedChild } from "./children.js";
import { lastCompletion, resumable } from "./state.js";

/** One settled turn as front ends report it. */
export interface TurnResult {
  id: string;
  /** The child's name (`spawn --name`), if it has one: what a header calls it by. */
  name?: string;
  agent: string;
  turnId: string;
  status: CompletionStatus;
  reason?: string;
  exitCode?: number | null;
  durationMs?: number;
  usage?: Usage;
  output?: OutputRef;
  outputError?: OutputError;
  /** The agent's stderr when it failed before the turn's prompt (its session did not open). */
  stderr?: string;
  /** The provider error the turn failed on (rate limit, quota, auth, overloaded), with its reset time if known. */
  providerError?: ProviderError;
  /** The child's acceptance check (`--verify`): its last run on this turn's answer, and how many runs it took. */
  verified?: Verified;
  artifactDir: string;
  /** Whether the child can be continued (`muster spawn --resume`): some turn of it completed with a result. */
  resumable: boolean;
  /** The snapshot's text, when asked for and available. */
  text?: string;
  /** A child in a worktree of its own: its branch, commit range, diff stat, writes seen in the parent's checkout. */
  isolation?: IsolationResult;
  /**
   * Lost to this wait only: the child's place has not answered for the unreachable bound. The child may still
   * run there; its real result is not consumed, and is delivered once the place answers again.
   */
  unreachable?: boolean;
  /** Why reading it could not mark it delivered (the state root cannot be written): it may be delivered again. */
  receiptError?: string;
}

export function toResult(c: LoadedChild, completion: CompletionEvent, withText: boolean): TurnResult {
  const r: TurnResult = {
    id: c.entry.id,
    ...(c.name !== undefined ? { name: c.name } : {}),
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
    ...(completion.stderr ? { stderr: completion.stderr } : {}),
    ...(completion.providerError ? { providerError: completion.providerError } : {}),
    ...(completion.verified ? { verified: completion.verified } : {}),
    ...isolationResult(c.files.dir, completion.turnId),
  };
  if (withText && completion.output) {
    const snap = c.store.readSnapshot(completion.output);
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

/**
 * Resolves a turn as a user names it: its full id, its number as `status` shows it (`2`), its short id (the
 * last 8 hex digits) or a unique prefix. Turn ids are UUIDv7 and begin with "0" for decades, so a number
 * without a leading zero is never mistaken for a prefix.
 */
export function resolveTurn(c: LoadedChild, ref: string): string {
  const id = c.entry.id;
  const next: NextStep = { action: "status", id };
  if (/^[1-9]\d{0,5}$/.test(ref)) {
    const t = c.state.turns.find((x) => x.n === Number(ref));
    if (t) return t.turnId;
    throw new MusterError(
      "not_found",
      `child ${id} has no settled turn ${ref} (it has ${c.state.turns.length} started)`,
      { next },
    );
  }
  // Only compared with the child's own turn ids, never used as a path: anything else is simply unknown.
  const want = ref.toLowerCase();
  const known = new Set([...c.state.turns.map((t) => t.turnId), ...c.state.completions.keys(), ...c.pending]);
  if (known.has(want)) return want;
  const matches = want === "" ? [] : [...known].filter((t) => t.startsWith(want) || t.endsWith(want));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new MusterError("invalid_argument", `turn "${ref}" is ambiguous: ${matches.sort().join(", ")}`, {
      next,
    });
  throw new MusterError("not_found", `child ${id} has no settled turn ${ref}`, { next });
}

/**
 * The completion of a settled turn of `c` (default: the latest); `turn` may be the turn's id, its number,
 * its short id or a unique prefix (see resolveTurn). A turn not settled yet is a `busy` error saying to wait.
 */
export function settledCompletion(c: LoadedChild, turn?: string): CompletionEvent {
  const turnId = turn === undefined ? undefined : resolveTurn(c, turn);
  const completion = turnId ? c.state.completions.get(turnId) : lastCompletion(c.state);
  if (completion) return completion;
  if (turnId)
    throw new MusterError("busy", `turn ${turnId} of child ${c.entry.id} has not settled yet`, {
      next: { action: "wait", ids: [c.entry.id] },
    });
  const gone = c.status === "closed" || c.status === "lost";
  throw new MusterError(
    gone ? "not_running" : "busy",
    `child ${c.entry.id} has no settled turn yet (status ${c.status})`,
    { next: { action: "wait", ids: [c.entry.id] } },
  );
}

/** A settled turn's result with its text (see settledCompletion); its delivery record is consumed by `result`. */
export function deliverResult(receipts: string, c: LoadedChild, turn?: string): TurnResult {
  const completion = settledCompletion(c, turn);
  const result = toResult(c, completion, true);
  const receiptError = appendReceiptsIfWritable(
    receipts,
    [recordIdOf(c.entry.id, completion.turnId)],
    "result",
  );
  return receiptError ? { ...result, receiptError } : result;
}
