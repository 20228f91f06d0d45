/** Library entry: the same core the CLI uses. */
export { createMuster, Muster, type MusterOptions, type SpawnOptions, type SpawnResult } from "./core/muster.js";
export { MusterError, type MusterErrorCode } from "./core/errors.js";
export type { TurnResult } from "./core/results.js";
export type { WaitOptions, WaitOutcome } from "./core/wait.js";
export type { LoadedChild } from "./core/children.js";
export type { ChildStatus } from "./core/state.js";
export type { MusterEvent, CompletionStatus, ChildMeta } from "./artifacts/events.js";
