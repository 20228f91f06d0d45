/** Library entry: the same core the CLI uses. */

export type { Budget, TreeUsage } from "./artifacts/budget.js";
export type { ChildMeta, CompletionStatus, MusterEvent } from "./artifacts/events.js";
export type { LoadedChild } from "./core/children.js";
export { MusterError, type MusterErrorCode } from "./core/errors.js";
export type { FollowUp, TurnSettings } from "./core/follow-up.js";
export type { WaitingGroup } from "./core/inbox.js";
export {
  type CancelResult,
  createMuster,
  Muster,
  type MusterOptions,
  type SpawnOptions,
  type SpawnResult,
} from "./core/muster.js";
export type { TurnResult } from "./core/results.js";
export type { ChildStatus } from "./core/state.js";
export type { WaitOptions, WaitOutcome } from "./core/wait.js";
export type { DeliveryRecord, Manifest } from "./delivery/records.js";
export {
  type AgentHandle,
  type AgentResult,
  type CodeRunResult,
  runCodeWorkflow,
  type WorkflowContext,
  workflow,
} from "./workflows/code.js";
export { discoverWorkflows, loadWorkflow } from "./workflows/discover.js";
export { musterHost, type StepOutcome, type WorkflowHost } from "./workflows/host.js";
export { type Progress, type RunResult, runWorkflow, type StepResult } from "./workflows/run.js";
export { parseWorkflow, type WorkflowDef, type WorkflowStep } from "./workflows/toml.js";
