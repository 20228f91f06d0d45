/** Library entry: the same core the CLI uses, with the built-in backends registered. */

export { MusterError, type MusterErrorCode, type NextStep } from "./base/errors.js";
export type { BestOfConflict, BestOfRequest, BestOfStarted } from "./core/best-of.js";
export type {
  BestOfChild,
  BestOfRecord,
  Verdict,
} from "./core/best-of-record.js";
export type { Caps } from "./core/caps.js";
export type { CompareRow, CompareView, DiffSize } from "./core/compare.js";
export type { WaitingGroup } from "./core/inbox.js";
export type { JudgeOptions, JudgeOutcome } from "./core/judge.js";
export type { LiveState, LiveStateName } from "./core/live-state.js";
export type { ChildLog, Following } from "./core/logs-follow.js";
export {
  type CancelResult,
  createMuster,
  Muster,
  type MusterOptions,
  type SpawnOptions,
  type SpawnResult,
} from "./core/muster.js";
export type { PendingRequest } from "./core/requests.js";
export type { TurnResult } from "./core/results.js";
export type { FollowUp, SendMode, TurnSettings } from "./core/send.js";
export type { ChildStatus, QueuedTurn } from "./core/state.js";
export type { TreePauseView } from "./core/tree-pause.js";
export type {
  Budget,
  ChildMeta,
  CompletionStatus,
  DeliveryRecord,
  Manifest,
  MusterEvent,
  ProviderError,
  ProviderErrorKind,
  TreeUsage,
} from "./core/types.js";
export type {
  ChildDetailView,
  ChildView,
  MalformedReport,
  OutcomeView,
  SnapshotView,
  TurnView,
} from "./core/views.js";
export type { WaitOptions, WaitOutcome } from "./core/wait.js";
export type {
  Backend,
  DeadStatus,
  HostControl,
  HostRef,
  Liveness,
  OtherPaneRef,
  PaneRef,
  PopupOptions,
  PopupTarget,
  SpawnPaneOptions,
  TmuxPaneRef,
} from "./mux/backend.js";
export { loadBackendModules } from "./mux/builtin.js";
export { localHostControl } from "./mux/local-host.js";
export { type BackendContext, type BackendFactory, backendNames, registerBackend } from "./mux/registry.js";
export {
  createWorkflows,
  type RunTarget,
  type RunView,
  type TransientStep,
  type WorkflowList,
  type WorkflowProgress,
  type WorkflowResult,
  type WorkflowResumeOptions,
  type WorkflowRunOptions,
  type WorkflowSummary,
  type Workflows,
} from "./workflows/api.js";
export {
  type AgentCall,
  type AgentHandle,
  type AgentResult,
  type CodeRunResult,
  runCodeWorkflow,
  type WorkflowContext,
  workflow,
} from "./workflows/code/code.js";
export { resumeCodeWorkflow } from "./workflows/code/code-resume.js";
export { type Progress, type RunResult, runWorkflow, type StepResult } from "./workflows/dag/run.js";
export { parseWorkflow, type WorkflowDef, type WorkflowStep } from "./workflows/dag/toml.js";
export { discoverWorkflows, loadWorkflow } from "./workflows/discover.js";
export {
  type HostOptions,
  type HostPause,
  musterHost,
  type StepOutcome,
  type WorkflowHost,
} from "./workflows/host.js";
export { runSandboxed, type SandboxOptions } from "./workflows/sandbox/sandbox.js";
export type { OutputSpec, StructuredOutcome } from "./workflows/structured.js";
