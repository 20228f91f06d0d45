import { MusterError } from "../base/errors.js";
import { writeFileAtomic } from "../util/fsx.js";
import type { WorkflowHost } from "./host.js";
import { RunLog, type RunView, readRun, runFiles } from "./run-log.js";

/**
 * Cancels a run from any process: leaves a cancel request in the run's directory (its runner, polling,
 * starts nothing more), cancels the children of its running steps, then waits for the runner to record the
 * end. A run whose runner is gone (`interrupted`) is settled here: running steps cancelled, the rest skipped.
 */
export async function cancelRun(
  host: WorkflowHost,
  runId: string,
  opts: { settleMs?: number } = {},
): Promise<RunView> {
  const stateDir = host.stateDir();
  const view = readRun(stateDir, runId);
  if (view.status !== "running" && view.status !== "paused" && view.status !== "interrupted")
    throw new MusterError("not_running", `workflow run ${runId} has already settled (${view.status})`);
  const files = runFiles(stateDir, runId);
  writeFileAtomic(files.cancel, `${new Date().toISOString()}\n`);
  const children = view.steps
    .filter((s) => (s.status === "running" || s.status === "paused") && s.childId)
    .map((s) => s.childId!);
  await host.cancel(children);
  if (view.status === "interrupted") {
    const log = RunLog.open(files);
    log.append({ type: "cancel_requested" });
    for (const s of view.steps) {
      if (s.status === "running")
        log.append({
          type: "step_settled",
          stepId: s.id,
          status: "cancelled",
          ...(s.childId ? { childId: s.childId } : {}),
          reason: "the run was cancelled after its runner had stopped",
        });
      else if (s.status === "pending")
        log.append({
          type: "step_settled",
          stepId: s.id,
          status: "skipped",
          reason: "the run was cancelled before it started",
        });
    }
    log.append({ type: "run_settled", status: "cancelled" });
    return readRun(stateDir, runId);
  }
  const deadline = Date.now() + (opts.settleMs ?? 15_000);
  for (;;) {
    const now = readRun(stateDir, runId);
    if (now.status !== "running" || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
}
