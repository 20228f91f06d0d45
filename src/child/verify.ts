/**
 * A child's acceptance check: after the agent's answer, the host runs the check where the child works (its
 * worktree, host or container) and the turn is `completed` only when it exits 0. It runs as its own process
 * group, bounded in time; only the end of its output is kept.
 */
import type { VerifySpec } from "../artifacts/events.js";
import { runBounded } from "../util/bounded-run.js";
import type { TurnControl } from "./turn-control.js";

// What goes into events, the result and a corrective prompt: the end, where a test runner prints its summary.
export const OUTPUT_TAIL_BYTES = 4 * 1024;

/** One run of the check. */
export interface CheckRun {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  outputTail: string;
  timedOut: boolean;
  /** The turn was stopped (cancel, interrupt) while the check ran: it was killed, not judged. */
  stopped: boolean;
}

/** Runs the check once in `cwd` with the child's environment; a stop of the turn kills it. */
export async function runCheck(
  spec: VerifySpec,
  cwd: string,
  env: Record<string, string>,
  control: TurnControl,
): Promise<CheckRun> {
  const started = Date.now();
  const stopping = new AbortController();
  control.onStop(() => stopping.abort());
  try {
    const run = await runBounded(spec.argv, {
      cwd,
      env: { ...env, PWD: cwd },
      timeoutMs: spec.timeoutMs,
      keepBytes: OUTPUT_TAIL_BYTES,
      signal: stopping.signal,
    });
    const bound = run.timedOut
      ? `\n[stopped after ${Math.round(spec.timeoutMs / 1000)} s, its time bound]`
      : "";
    return { ...run, outputTail: run.outputTail + bound, stopped: stopping.signal.aborted };
  } catch (e) {
    // It could not start at all (no such program, a working directory gone): a failed check, saying why.
    const outputTail = `cannot run the check: ${(e as Error).message}`;
    return {
      exitCode: 127,
      signal: null,
      durationMs: Date.now() - started,
      outputTail,
      timedOut: false,
      stopped: false,
    };
  } finally {
    control.onStop(() => {});
  }
}

/** Whether a run passed: exit 0, not killed. */
export const passed = (run: CheckRun): boolean => run.exitCode === 0 && !run.timedOut && !run.stopped;

/** One line on how a failed run ended. */
export function failureLine(spec: VerifySpec, run: CheckRun): string {
  if (run.timedOut) return `the check \`${spec.command}\` did not finish within ${spec.timeoutMs / 1000} s`;
  if (run.exitCode === null) return `the check \`${spec.command}\` was killed by ${run.signal}`;
  return `the check \`${spec.command}\` exited ${run.exitCode}`;
}

/** The prompt that sends a failed check back to the agent, to fix in the same turn. */
export function correctivePrompt(spec: VerifySpec, run: CheckRun, attempt: number): string {
  return [
    `muster ran this task's acceptance check after your answer, and it failed: ${failureLine(spec, run)}.`,
    "The end of its output:",
    "```",
    run.outputTail.trimEnd(),
    "```",
    `Fix what makes it fail, then answer again (correction ${attempt} of ${spec.retries}; the check runs again after your answer).`,
  ].join("\n");
}
