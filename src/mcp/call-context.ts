/** What every tool handler is handed with its arguments: the core, the call's signal and progress, the runs. */
import type { Muster } from "../core/muster.js";
import type { CallProgress } from "./progress.js";
import type { WorkflowRuns } from "./workflow.js";

export interface CallContext {
  m: Muster;
  /** Aborted when the client cancels this call, or when the connection closes. */
  signal: AbortSignal;
  /** After an abort: "cancelled" (the client cancelled this call) or "closed" (the connection went away). */
  abortReason(): Promise<"cancelled" | "closed">;
  progress: CallProgress;
  /** The workflow runs this server started (subagents_workflow). */
  runs: WorkflowRuns;
}
