/** Types of the records a front end shows (artifacts, delivery), re-exported so front ends import only the core. */
export type { Budget, TreeUsage } from "../artifacts/budget.js";
export type {
  ChildMeta,
  CompletionStatus,
  MusterEvent,
  ProviderError,
  ProviderErrorKind,
  Usage,
  Verified,
} from "../artifacts/events.js";
export type { MalformedLine } from "../artifacts/reader.js";
export type { DeliveryRecord, Manifest } from "../delivery/records.js";
