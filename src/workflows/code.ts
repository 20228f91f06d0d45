import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { MusterError } from "../base/errors.js";
import { writeJsonAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import type { StepSpawn, WorkflowHost } from "./host.js";
import { processStart, RunLog, runFiles, type StepStatus } from "./run-log.js";
import {
  compileOutput,
  finishStructured,
  modeOf,
  type OutputSpec,
  outcomeFields,
  type StructuredMode,
  structuredSpawn,
} from "./structured.js";

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
  log(text: string): void;
  /** Aborted when the run is cancelled. */
  readonly signal: AbortSignal;
}

export type WorkflowFn = (ctx: WorkflowContext, input: string) => Promise<unknown> | unknown;

const MARK = Symbol.for("muster.workflow");
export interface CodeWorkflow {
  [MARK]: true;
  fn: WorkflowFn;
}

/** Marks a workflow function: `export default workflow(async (ctx, input) => …)`. A plain default function works too. */
export function workflow(fn: WorkflowFn): CodeWorkflow {
  return { [MARK]: true, fn };
}

/** Imports a code workflow module (trusted code: it runs in this process) and returns its function. */
export async function loadCodeWorkflow(file: string): Promise<WorkflowFn> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(path.resolve(file)).href)) as { default?: unknown };
  } catch (e) {
    throw new MusterError(
      "invalid_config",
      `workflow ${file}: cannot load (${(e as Error).message.split("\n")[0]})`,
    );
  }
  const d = mod.default;
  if (typeof d === "function") return d as WorkflowFn;
  if (d && typeof d === "object" && (d as CodeWorkflow)[MARK] && typeof (d as CodeWorkflow).fn === "function")
    return (d as CodeWorkflow).fn;
  throw new MusterError(
    "invalid_config",
    `workflow ${file}: its default export must be workflow(async (ctx, input) => …)`,
  );
}

export interface CodeRunResult {
  runId: string;
  workflow: string;
  status: "completed" | "failed" | "cancelled";
  dir: string;
  /** What the function returned (JSON-serializable values are also written to result.json). */
  result?: unknown;
  /** Why the function threw. */
  error?: string;
  /** Every ctx.agent call, in call order. */
  agents: AgentResult[];
}

export interface CodeRunOptions {
  signal?: AbortSignal;
  onProgress?: (
    p:
      | { type: "run_started"; runId: string; dir: string }
      | { type: "agent_started"; id: string; childId: string; agent: string }
      | { type: "agent_settled"; result: AgentResult }
      | { type: "log"; text: string },
  ) => void;
  /** Children one run may start; calls beyond it settle errored without a child (default 256). */
  maxAgents?: number;
}

/**
 * Runs a code workflow. Every ctx.agent call is a real child (the primary's bound and limits apply) recorded
 * in the run's event log as step `agent-<n>`. Cancelling cancels the running children; later calls settle
 * `cancelled` without starting one.
 */
export async function runCodeWorkflow(
  host: WorkflowHost,
  name: string,
  fn: WorkflowFn,
  input: string,
  opts: CodeRunOptions = {},
): Promise<CodeRunResult> {
  const runId = uuidv7();
  const files = runFiles(host.stateDir(), runId);
  const log = RunLog.create(files, { name, description: "", steps: [], source: name }, input);
  const pidStart = processStart(process.pid);
  log.append({
    type: "run_started",
    runId,
    workflow: name,
    source: name,
    pid: process.pid,
    ...(pidStart ? { pidStart } : {}),
    steps: [],
  });
  opts.onProgress?.({ type: "run_started", runId, dir: files.dir });
  const max = opts.maxAgents ?? 256;
  const controller = new AbortController();
  const running = new Map<string, string>();
  const results: AgentResult[] = [];
  let calls = 0;

  const onAbort = (): void => {
    if (controller.signal.aborted) return;
    controller.abort();
    log.append({ type: "cancel_requested" });
    void host.cancel([...running.values()]).catch(() => {});
  };
  if (opts.signal?.aborted) onAbort();
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  // `muster workflow cancel` from another process leaves a request file (see cancel.ts).
  const poll = setInterval(() => {
    if (fs.existsSync(files.cancel)) onAbort();
  }, 500);
  poll.unref();

  const settle = (r: AgentResult): AgentResult => {
    results.push(r);
    // A structured worker's recorded output is its decoded value, not the prose around it.
    const text = "output" in r ? JSON.stringify(r.output, null, 2) : (r.text ?? "");
    const output = r.status === "completed" ? log.writeOutput(r.id, text) : undefined;
    log.append({
      type: "step_settled",
      stepId: r.id,
      status: r.status,
      ...(r.childId ? { childId: r.childId } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(output ? { output } : {}),
    });
    opts.onProgress?.({ type: "agent_settled", result: r });
    return r;
  };

  const start = async (
    id: string,
    call: AgentCall,
    validate?: ReturnType<typeof compileOutput>,
  ): Promise<AgentResult> => {
    const base = { id, agent: String(call?.agent) };
    if (controller.signal.aborted)
      return settle({ ...base, status: "cancelled", reason: "the run was cancelled" });
    if (calls > max)
      return settle({ ...base, status: "errored", reason: `the run's cap of ${max} children is reached` });
    let child: { id: string; turnId: string };
    const plain: StepSpawn = {
      agent: call.agent,
      prompt: call.prompt,
      ...(call.model ? { model: call.model } : {}),
      ...(call.reasoning ? { reasoning: call.reasoning } : {}),
    };
    const spawn = validate && call.output ? structuredSpawn(host, plain, call.output) : plain;
    try {
      child = await host.spawn(spawn);
    } catch (e) {
      return settle({ ...base, status: "errored", reason: `could not start: ${(e as Error).message}` });
    }
    running.set(id, child.id);
    log.append({
      type: "step_started",
      stepId: id,
      childId: child.id,
      turnId: child.turnId,
      agent: call.agent,
    });
    opts.onProgress?.({ type: "agent_started", id, childId: child.id, agent: call.agent });
    if (controller.signal.aborted) await host.cancel([child.id]).catch(() => {});
    const out =
      validate && call.output
        ? await finishStructured(
            host,
            child,
            call.output,
            validate,
            (turnId) => log.append({ type: "step_retried", stepId: id, turnId }),
            modeOf(spawn),
          )
        : await host.wait(child.id, child.turnId);
    running.delete(id);
    return settle({ ...base, childId: child.id, ...outcomeFields(out) });
  };

  const ctx: WorkflowContext = {
    agent(call) {
      // A bad schema is the caller's bug: refused here, before any child starts or any step is counted.
      const validate =
        call?.output !== undefined
          ? compileOutput(call.output, `ctx.agent (${String(call.agent)})`)
          : undefined;
      calls += 1;
      const id = `agent-${calls}`;
      const p = start(id, call, validate);
      return { id, await: () => p };
    },
    // biome-ignore lint/suspicious/noExplicitAny: one implementation for both overloads
    await: (async (handles: AgentHandle[], mode: "all" | "first" = "all"): Promise<any> => {
      if (mode === "all") return Promise.all(handles.map((h) => h.await()));
      if (handles.length === 0)
        throw new MusterError("invalid_argument", 'ctx.await(handles, "first") needs at least one handle');
      const first = await Promise.race(handles.map((h, i) => h.await().then((result) => ({ result, i }))));
      return { result: first.result, rest: handles.filter((_, i) => i !== first.i) };
    }) as WorkflowContext["await"],
    async parallel(items, fn, o = {}) {
      const limit = Math.max(1, o.limit ?? items.length);
      const out = new Array(items.length);
      let next = 0;
      const lane = async (): Promise<void> => {
        while (next < items.length) {
          const i = next++;
          out[i] = await fn(items[i]!, i);
        }
      };
      await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
      return out;
    },
    log(text) {
      opts.onProgress?.({ type: "log", text: String(text) });
    },
    signal: controller.signal,
  };

  let status: CodeRunResult["status"];
  let result: unknown;
  let error: string | undefined;
  try {
    result = await fn(ctx, input);
    status = controller.signal.aborted ? "cancelled" : "completed";
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
    status = controller.signal.aborted ? "cancelled" : "failed";
    // A function that threw will not collect what it started: its children are cancelled, not left running.
    await host.cancel([...running.values()]).catch(() => {});
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  // Children the function started but never awaited still belong to the run: it ends when they have settled.
  while (running.size > 0) await new Promise((r) => setTimeout(r, 100));
  if (result !== undefined) {
    try {
      writeJsonAtomic(path.join(files.dir, "result.json"), result);
    } catch {
      // Not JSON-serializable: the caller still gets it.
    }
  }
  clearInterval(poll);
  if (fs.existsSync(files.cancel)) status = "cancelled";
  log.append({ type: "run_settled", status });
  return {
    runId,
    workflow: name,
    status,
    dir: files.dir,
    ...(result !== undefined ? { result } : {}),
    ...(error !== undefined ? { error } : {}),
    agents: [...results].sort((a, b) => Number(a.id.slice(6)) - Number(b.id.slice(6))),
  };
}
