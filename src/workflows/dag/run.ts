import * as fs from "node:fs";
import { MusterError } from "../../base/errors.js";
import { uuidv7 } from "../../util/ids.js";
import type { StepOutcome, WorkflowHost } from "../host.js";
import { MAX_CONTINUES, pausedRecord, pausing, untilUnpaused } from "../pause.js";
import { processStart, RunLog, type RunStatus, runFiles, type StepStatus, stepSettled } from "../run-log.js";
import {
  compileOutput,
  finishStructured,
  modeOf,
  outcomeFields,
  type StructuredMode,
  type StructuredOutcome,
  structuredSpawn,
} from "../structured.js";
import { runBestOfStep } from "./best-of-step.js";
import { stepPrompt, stepSpawn } from "./step-spawn.js";
import {
  checkAgents,
  checkWorkflow,
  type StepBestOf,
  terminalSteps,
  type WorkflowDef,
  type WorkflowStep,
} from "./toml.js";

/** The settled result of one step. */
export interface StepResult {
  id: string;
  agent: string;
  status: StepStatus;
  childId?: string;
  reason?: string;
  /** For a skipped step: the dependency that did not complete. */
  cause?: { stepId: string; status: StepStatus };
  text?: string;
  /** A structured step's decoded answer (its dependents receive it as JSON). */
  output?: unknown;
  /** A structured step: whether the runner enforced the schema ("native") or the prompt asked ("instructed"). */
  structured?: StructuredMode;
  /** Why a structured step's answer was refused after its corrective retry: one line per error. */
  errors?: string[];
}

export interface RunResult {
  runId: string;
  workflow: string;
  status: Exclude<RunStatus, "running" | "paused" | "interrupted">;
  dir: string;
  /** Every step, in declaration order. */
  steps: StepResult[];
  /** The terminal steps (those no step needs), in declaration order: the workflow's results. */
  results: StepResult[];
}

export type Progress =
  | { type: "run_started"; runId: string; dir: string }
  | { type: "step_started"; stepId: string; childId: string; agent: string }
  | { type: "step_paused"; stepId: string; childId: string; reason: string }
  | { type: "step_settled"; step: StepResult };

export interface RunOptions {
  /** Aborting cancels the run: nothing more starts, running steps' children are cancelled. */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** How often the run looks for a cancel request from another process (`muster workflow cancel`). */
  cancelPollMs?: number;
  /**
   * Steps in flight at once (starting, or their child's turn running); ready steps beyond it wait `queued`.
   * Default: the host's (the primary's run-slot limit), else 4.
   */
  concurrency?: number;
}

const DEFAULT_CONCURRENCY = 4;

function concurrencyOf(n: number): number {
  if (!Number.isSafeInteger(n) || n < 1)
    throw new MusterError("invalid_argument", `workflow concurrency must be a whole number ≥ 1, not ${n}`);
  return n;
}

/**
 * Runs a TOML workflow: ready steps start as they become ready, at most `concurrency` in flight (each a real
 * child; by default as many as the primary has run slots, so no spawn waits behind a full host); a step that does not complete skips only its dependents; results come back in declaration order.
 * Validation (agents included) happens before anything is written. The run is recorded under
 * `<primary dir>/workflows/<run id>/`.
 */
export async function runWorkflow(
  host: WorkflowHost,
  def: WorkflowDef,
  input: string,
  opts: RunOptions = {},
): Promise<RunResult> {
  checkWorkflow(def);
  checkAgents(def, host.agents());
  if (opts.concurrency !== undefined) concurrencyOf(opts.concurrency);
  const runId = uuidv7();
  const files = runFiles(host.stateDir(), runId);
  const log = RunLog.create(files, def, input);
  const pidStart = processStart(process.pid);
  log.append({
    type: "run_started",
    runId,
    workflow: def.name,
    source: def.source,
    pid: process.pid,
    ...(pidStart ? { pidStart } : {}),
    steps: def.steps.map((s) => s.id),
  });
  opts.onProgress?.({ type: "run_started", runId, dir: files.dir });
  return execute(host, def, input, runId, log, { completed: new Map(), attach: new Map() }, opts);
}

/** What a resumed run starts from: completed steps (kept, not re-run) and children that may still be running. */
export interface Prior {
  completed: Map<string, StepResult>;
  /** A best-of step's are its candidates, to be cancelled: the step starts again. */
  attach: Map<string, { childId: string; turnId: string; candidates?: string[] }>;
}

/** The scheduling loop shared by a new run and a resumed one (resume.ts); `log` is the run's open event log. */
export async function execute(
  host: WorkflowHost,
  def: WorkflowDef,
  input: string,
  runId: string,
  log: RunLog,
  prior: Prior,
  opts: RunOptions,
): Promise<RunResult> {
  const files = log.files;
  const limit = concurrencyOf(opts.concurrency ?? host.concurrency?.() ?? DEFAULT_CONCURRENCY);
  const settled = new Map<string, StepResult>(prior.completed);
  const outputs = new Map<string, string>([...prior.completed].map(([id, r]) => [id, r.text ?? ""]));
  const running = new Map<string, string>(); // step id → child id
  const candidateSets = new Map<string, string[]>(); // a best-of step's id → its candidates' ids
  const started = new Set<string>(prior.completed.keys());
  // Step children being closed once their step settled (host.release): the run ends after they are.
  const releasing: Promise<void>[] = [];
  const release = (childId: string): void => {
    if (host.release) releasing.push(host.release(childId));
  };
  let cancelled = false;
  // Steps waiting for the tree's pause to lift: while any does, no other step starts.
  let pausedSteps = 0;
  let finish!: () => void;
  const done = new Promise<void>((r) => {
    finish = r;
  });

  // A settled step: its dependents whose last need this was are looked at by the next schedule().
  const markSettled = (r: StepResult): void => {
    settled.set(r.id, r);
    for (const d of dependents.get(r.id) ?? []) {
      const left = unsettledNeeds.get(d.id)! - 1;
      unsettledNeeds.set(d.id, left);
      if (left === 0) unblocked.push(d);
    }
  };
  /** Settles a step; `handed`, a completed step's, is what its dependents receive (kept in outputs/). */
  const settle = (r: StepResult, handed?: string): void => {
    let output: { path: string; bytes: number } | undefined;
    if (handed !== undefined) {
      outputs.set(r.id, handed);
      output = log.writeOutput(r.id, handed);
    }
    markSettled(r);
    log.append(stepSettled(r, output ? { output } : {}));
    opts.onProgress?.({ type: "step_settled", step: r });
  };

  const runStep = async (step: WorkflowStep): Promise<void> => {
    const base = { id: step.id, agent: step.agent };
    // A resumed run first waits for the child its runner left running; only if that did not complete does
    // the step start again.
    // A structured worker is one-shot: a child left running by an interrupted run is not attached but replaced.
    // So is a best-of step: its candidates are started again, all together.
    const left = prior.attach.get(step.id);
    const oneShot = !!step.output || !!step.bestOf;
    if (left && oneShot) await host.cancel(left.candidates ?? [left.childId]).catch(() => {});
    if (step.bestOf) return runBestOf(step, step.bestOf);
    if (left && !oneShot) {
      running.set(step.id, left.childId);
      // Left paused by a run that stopped meanwhile: once the tree's pause lifts, the same child goes on.
      const out = await untilNotPausing(step, left.childId, await host.wait(left.childId, left.turnId));
      running.delete(step.id);
      release(left.childId);
      if (out.status === "completed") {
        settle(
          {
            ...base,
            childId: left.childId,
            status: "completed",
            ...(out.text !== undefined ? { text: out.text } : {}),
          },
          out.text ?? "",
        );
        return;
      }
      if (cancelled) {
        settle({
          ...base,
          childId: left.childId,
          status: out.status,
          ...(out.reason ? { reason: out.reason } : {}),
        });
        return;
      }
    }
    let child: { id: string; turnId: string };
    const plain = stepSpawn(step, input, outputs);
    const spawn = step.output ? structuredSpawn(host, plain, step.output) : plain;
    try {
      child = await host.spawn(spawn);
    } catch (e) {
      settle({ ...base, status: "errored", reason: `could not start: ${(e as Error).message}` });
      return;
    }
    running.set(step.id, child.id);
    log.append({
      type: "step_started",
      stepId: step.id,
      childId: child.id,
      turnId: child.turnId,
      agent: step.agent,
    });
    opts.onProgress?.({ type: "step_started", stepId: step.id, childId: child.id, agent: step.agent });
    // A cancel that came while this child was being started must reach it too.
    if (cancelled) await host.cancel([child.id]).catch(() => {});
    let out: StructuredOutcome = step.output
      ? await finishStructured(
          host,
          child,
          step.output,
          compileOutput(step.output, step.id),
          (turnId) => log.append({ type: "step_retried", stepId: step.id, turnId }),
          modeOf(spawn),
        )
      : await host.wait(child.id, child.turnId);
    if (!step.output) out = await untilNotPausing(step, child.id, out as StepOutcome);
    running.delete(step.id);
    const r: StepResult = { ...base, childId: child.id, ...outcomeFields(out) };
    // A structured step hands on its decoded value, not the prose around it.
    const handed = "output" in out ? JSON.stringify(out.output, null, 2) : (out.text ?? "");
    settle(r, out.status === "completed" ? handed : undefined);
    // A structured worker's child was closed by finishStructured already.
    if (!step.output) release(child.id);
  };

  /** A best-of step: its candidates are in flight together (and cancelled together); see best-of-step.ts. */
  const runBestOf = async (step: WorkflowStep, spec: StepBestOf): Promise<void> => {
    let mine: string[] = [];
    const out = await runBestOfStep(host, spec, stepSpawn(step, input, outputs), (group, candidates) => {
      mine = candidates.map((c) => c.id);
      candidateSets.set(step.id, mine);
      const first = candidates[0]!;
      log.append({
        type: "step_started",
        stepId: step.id,
        childId: first.id,
        turnId: first.turnId,
        agent: step.agent,
        group,
        candidates: mine,
      });
      opts.onProgress?.({ type: "step_started", stepId: step.id, childId: first.id, agent: step.agent });
      if (cancelled) void host.cancel(mine).catch(() => {});
    });
    candidateSets.delete(step.id);
    const r: StepResult = { id: step.id, agent: step.agent, ...out.result };
    settle(r, r.status === "completed" ? (out.text ?? "") : undefined);
    for (const id of mine) release(id);
  };

  /**
   * A quota or a refused credential pauses the run with its tree; once the pause lifts the same child runs the
   * step again, its conversation kept (never a blank context), at most MAX_CONTINUES times. The last outcome.
   */
  const untilNotPausing = async (
    step: WorkflowStep,
    childId: string,
    first: StepOutcome,
  ): Promise<StepOutcome> => {
    let out = first;
    for (let n = 0; pausing(out) && !cancelled && n < MAX_CONTINUES; n++) {
      const turnId = await pauseStep(step, childId, out);
      if (!turnId) break;
      out = await host.wait(childId, turnId);
    }
    return out;
  };

  /** Holds the step until the tree's pause lifts, then sends its prompt again; the new turn, or undefined. */
  const pauseStep = async (
    step: WorkflowStep,
    childId: string,
    out: StepOutcome,
  ): Promise<string | undefined> => {
    const paused = pausedRecord(step.id, childId, out);
    pausedSteps += 1;
    log.append(paused);
    opts.onProgress?.({ type: "step_paused", stepId: step.id, childId, reason: paused.reason });
    try {
      await untilUnpaused(host, () => cancelled);
    } finally {
      pausedSteps -= 1;
    }
    if (cancelled) return undefined;
    const sent = await host.send(childId, stepPrompt(step, input, outputs)).catch(() => undefined);
    if (!sent) return undefined;
    log.append({ type: "step_continued", stepId: step.id, childId, turnId: sent.turnId });
    // Steps held back while the run was paused may start now.
    schedule();
    return sent.turnId;
  };

  // The graph, indexed once: a step is looked at when its last need settles, not on every settle (a run may
  // have thousands of steps). Everything below is iterative, so a long chain of skips cannot overflow.
  const dependents = new Map<string, WorkflowStep[]>();
  const unsettledNeeds = new Map<string, number>();
  for (const s of def.steps) {
    unsettledNeeds.set(s.id, s.needs.filter((n) => !settled.has(n)).length);
    for (const n of s.needs) {
      const list = dependents.get(n);
      if (list) list.push(s);
      else dependents.set(n, [s]);
    }
  }
  // Steps whose needs have all settled, not looked at yet; then those ready to start, in the order they became so.
  let unblocked: WorkflowStep[] = def.steps.filter(
    (s) => !settled.has(s.id) && unsettledNeeds.get(s.id) === 0,
  );
  const ready: WorkflowStep[] = [];
  let readyHead = 0;
  let inFlight = 0;

  // Starts ready steps while fewer than `limit` are in flight (the rest wait, `queued`), skipping those with a
  // need that did not complete (skips cascade). Called once at the start and after every settled step.
  const schedule = (): void => {
    // A cancel request may have cancelled a child before the poll saw it: look before deciding anything.
    if (!cancelled && fs.existsSync(files.cancel)) cancel();
    log.batch(() => {
      const room = (): boolean => cancelled || (inFlight < limit && pausedSteps === 0);
      while (unblocked.length > 0 || (readyHead < ready.length && room())) {
        const now = unblocked;
        unblocked = [];
        for (const step of now) {
          if (started.has(step.id) || settled.has(step.id)) continue;
          const failed = step.needs.map((n) => settled.get(n)!).find((r) => r.status !== "completed");
          if (failed || cancelled) skip(step, failed);
          else ready.push(step);
        }
        while (readyHead < ready.length && room()) {
          const step = ready[readyHead++]!;
          if (cancelled) skip(step, undefined);
          else start(step);
        }
      }
    });
    if (settled.size === def.steps.length) finish();
  };

  const skip = (step: WorkflowStep, failed: StepResult | undefined): void => {
    started.add(step.id);
    settle({
      id: step.id,
      agent: step.agent,
      status: "skipped",
      ...(failed
        ? {
            reason: `needs "${failed.id}", which ${failed.status === "skipped" ? "was skipped" : failed.status}`,
            cause: { stepId: failed.id, status: failed.status },
          }
        : { reason: "the run was cancelled before it started" }),
    });
  };

  const start = (step: WorkflowStep): void => {
    started.add(step.id);
    inFlight += 1;
    void runStep(step).then(
      () => {
        inFlight -= 1;
        schedule();
      },
      (e: unknown) => {
        inFlight -= 1;
        // Only a failure to record (a full disk) lands here: the step is settled as errored if it can be.
        if (!settled.has(step.id))
          markSettled({ id: step.id, agent: step.agent, status: "errored", reason: String(e) });
        schedule();
      },
    );
  };

  function cancel(): void {
    if (cancelled) return;
    cancelled = true;
    log.append({ type: "cancel_requested" });
    void host.cancel([...running.values(), ...[...candidateSets.values()].flat()]).catch(() => {});
    schedule();
  }
  const onAbort = (): void => cancel();
  if (opts.signal?.aborted) cancelled = true;
  opts.signal?.addEventListener("abort", onAbort, { once: true });
  const poll = setInterval(() => {
    if (fs.existsSync(files.cancel)) cancel();
  }, opts.cancelPollMs ?? 500);
  poll.unref();

  try {
    schedule();
    await done;
  } finally {
    clearInterval(poll);
    opts.signal?.removeEventListener("abort", onAbort);
  }
  await Promise.all(releasing);

  const steps = def.steps.map((s) => settled.get(s.id)!);
  const status = cancelled
    ? "cancelled"
    : steps.every((s) => s.status === "completed")
      ? "completed"
      : "failed";
  log.append({ type: "run_settled", status });
  const terminal = new Set(terminalSteps(def).map((s) => s.id));
  return {
    runId,
    workflow: def.name,
    status,
    dir: files.dir,
    steps,
    results: steps.filter((s) => terminal.has(s.id)),
  };
}
