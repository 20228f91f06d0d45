/**
 * A workflow step or call whose turn a provider stopped for a reason that holds the whole tree (a quota, a
 * refused credential): the run records the pause, waits for the tree's pause to lift (`muster resume-tree`,
 * or the reset time going by), and sends the same prompt to the same child again, its conversation kept —
 * never a blank context. TOML runs (dag/run.ts) and code runs (code/code-exec.ts) both hold this way.
 */
import type { StepOutcome, WorkflowHost } from "./host.js";
import type { RunEventInput } from "./run-log.js";

// How often a paused run looks whether its tree's pause has lifted.
const PAUSE_LOOK_MS = 500;
/** A step continued this many times after pauses and still refused settles with its last outcome. */
export const MAX_CONTINUES = 5;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A step outcome that pauses the run with its tree: a provider's quota, or a refused credential. */
export const pausing = (out: StepOutcome): boolean =>
  out.status === "errored" && (out.providerError?.kind === "quota" || out.providerError?.kind === "auth");

/** The run-log record of a step held by the tree's pause. */
export function pausedRecord(
  stepId: string,
  childId: string,
  out: StepOutcome,
): Extract<RunEventInput, { type: "step_paused" }> {
  const e = out.providerError!;
  return {
    type: "step_paused",
    stepId,
    childId,
    kind: e.kind,
    reason: e.message.split("\n", 1)[0]!.slice(0, 500),
    ...(e.resetAt ? { resetAt: e.resetAt } : {}),
  };
}

/** Waits while the tree is paused (or until the run is cancelled). */
export async function untilUnpaused(host: WorkflowHost, cancelled: () => boolean): Promise<void> {
  while (!cancelled() && host.treePause?.()) await sleep(PAUSE_LOOK_MS);
}
