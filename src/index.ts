/** Library entry: the same core the CLI uses. */

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
export type {
  Budget,
  ChildMeta,
  CompletionStatus,
  DeliveryRecord,
  Manifest,
  MusterEvent,
  TreeUsage,
} from "./core/types.js";
export type { WaitOptions, WaitOutcome } from "./core/wait.js";
