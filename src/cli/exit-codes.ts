import type { MusterErrorCode } from "../base/errors.js";
import type { TurnResult } from "../core/results.js";
import type { CompletionStatus } from "../core/types.js";

/**
 * The CLI's exit codes, the one place they are decided (docs/cli.md "Exit codes" and `muster --help`). The core
 * returns outcomes and throws coded errors; only the CLI turns them into a process's exit code.
 */
export const EXIT = {
  ok: 0,
  errored: 1,
  usage: 2,
  cancelled: 3,
  exhausted: 4,
  lost: 5,
  failedVerification: 6,
  timeout: 124,
  interrupted: 130,
} as const;

export const EXIT_TABLE = `Exit codes:
  0    completed / ok            3    cancelled or interrupted   124  timed out waiting (the child keeps running)
  1    errored / runtime error   4    exhausted or incomplete    130  interrupted
  2    usage or validation error (nothing created)                5    lost (child host or pane died)
  6    failed verification (the answer did not pass --verify)`;

/** A settled turn's outcome. */
export const STATUS_EXIT: Record<CompletionStatus, number> = {
  completed: EXIT.ok,
  errored: EXIT.errored,
  cancelled: EXIT.cancelled,
  exhausted: EXIT.exhausted,
  incomplete: EXIT.exhausted,
  lost: EXIT.lost,
  // A turn the parent stopped is a kind of cancel; the child itself stays.
  interrupted: EXIT.cancelled,
  failed_verification: EXIT.failedVerification,
};

/** An error by its code: whatever the caller can fix by asking differently is a usage error (nothing was created). */
export const ERROR_EXIT: Record<MusterErrorCode, number> = {
  invalid_argument: EXIT.usage,
  invalid_id: EXIT.usage,
  invalid_config: EXIT.usage,
  not_found: EXIT.usage,
  other_primary: EXIT.usage,
  not_running: EXIT.usage,
  busy: EXIT.usage,
  not_resumable: EXIT.usage,
  limit_reached: EXIT.usage,
  unsupported: EXIT.usage,
  mux_unavailable: EXIT.errored,
  unreachable: EXIT.errored,
  integrity: EXIT.errored,
  storage: EXIT.errored,
  internal: EXIT.errored,
};

/**
 * `result`'s code: the outcome's, or for a completed turn whose output could not be kept, the code of that
 * failure (the answer asked for cannot be given).
 */
export function resultExit(r: TurnResult): number {
  if (r.status !== "completed") return STATUS_EXIT[r.status];
  if (!r.outputError) return EXIT.ok;
  return r.outputError.code === "output_too_large" ? EXIT.exhausted : EXIT.errored;
}

/**
 * A best-of run's code: interrupted → 130; else 0 when some candidate completed (its check, if it had one,
 * passed), also when others are still running past a timeout; else timed out → 124; else the first
 * candidate's failure, in the run's order.
 */
export function bestOfExit(o: { results: TurnResult[]; timedOut: boolean; interrupted: boolean }): number {
  if (o.interrupted) return EXIT.interrupted;
  if (o.results.some((r) => r.status === "completed")) return EXIT.ok;
  if (o.timedOut) return EXIT.timeout;
  const failed = o.results.find((r) => r.status !== "completed");
  return failed ? STATUS_EXIT[failed.status] : EXIT.errored;
}
