import type { StepSpawn } from "../host.js";
import type { StepStatus } from "../run-log.js";
import type { OutputSpec, StructuredMode } from "../structured.js";
import type { Stage } from "./ctx-flow.js";

/** One `ctx.agent` call's settled result. A child's failure is a value (status, reason), never thrown. */
export interface AgentResult {
  /** The call's step id in the run record: `agent-<n>`, n counting calls from 1. */
  id: string;
  agent: string;
  status: Exclude<StepStatus, "skipped">;
  childId?: string;
  reason?: string;
  text?: string;
  /** A structured worker's decoded answer (the call had `output`). */
  output?: unknown;
  /** A structured worker: whether the runner enforced the schema ("native") or the prompt asked ("instructed"). */
  structured?: StructuredMode;
  /** Why a structured worker's answer was refused after its corrective retry: one line per error. */
  errors?: string[];
}

/** A ctx.agent call; with `output` the child is a one-shot structured worker (see structured.ts). */
export interface AgentCall extends StepSpawn {
  output?: OutputSpec;
}

export interface AgentHandle {
  readonly id: string;
  await(): Promise<AgentResult>;
}

export interface WorkflowContext {
  /** Starts a child at once and returns its handle. Throws (no child) when `output` has a bad schema. */
  agent(call: AgentCall): AgentHandle;
  /** "all": every result, in the handles' order. */
  await(handles: AgentHandle[], mode?: "all"): Promise<AgentResult[]>;
  /** "first": the first result to settle, and the handles still open (in their order). */
  await(handles: AgentHandle[], mode: "first"): Promise<{ result: AgentResult; rest: AgentHandle[] }>;
  /** Runs fn over items, at most `limit` at a time (default: all); results in item order. */
  parallel<T, R>(
    items: T[],
    fn: (item: T, index: number) => Promise<R>,
    opts?: { limit?: number },
  ): Promise<R[]>;
  /**
   * Streams items through the stages (see ctx-flow.ts): an item's next stage starts when its own current one
   * ends. A stage that returns a handle passes on its settled result. Results in item order.
   */
  pipeline(items: unknown[], ...stages: Stage[]): Promise<unknown[]>;
  /** Names the run's current phase: recorded in its event log, shown by progress and `workflow status`. */
  phase(name: string): void;
  log(text: string): void;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
}

export type WorkflowFn = (ctx: WorkflowContext, input: string) => Promise<unknown> | unknown;

export interface CodeRunResult {
  runId: string;
  workflow: string;
  status: "completed" | "failed" | "cancelled";
  dir: string;
  /** What the function returned (JSON-serializable values are also written to result.json). */
  result?: unknown;
  /** Why the function threw. */
  error?: string;
  /** Every ctx.agent call, in call order: step `agent-<n>` of the run record (named as a TOML run's steps). */
  steps: AgentResult[];
}

export type CodeProgress =
  | { type: "run_started"; runId: string; dir: string }
  | { type: "agent_started"; id: string; childId: string; agent: string }
  | { type: "agent_settled"; result: AgentResult }
  /** A resumed run's call answered from the log: no child started. */
  | { type: "agent_replayed"; result: AgentResult }
  | { type: "replay_ended"; id: string; replayed: number; reason: string }
  | { type: "phase"; name: string }
  | { type: "log"; text: string };

export interface CodeRunOptions {
  signal?: AbortSignal;
  onProgress?: (p: CodeProgress) => void;
  /** Children one run may start; calls beyond it settle errored without a child (default 256). */
  maxAgents?: number;
  /**
   * Where the function comes from, so `muster workflow resume` can run it again: a module file, or a sandboxed
   * program's text (kept in the run's `program.js`). Without it a resume needs the function handed back.
   */
  origin?: { kind: "code"; file: string } | { kind: "sandbox"; file?: string; program: string };
}
