import { MusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import { shortId } from "../util/ids.js";
import type { RunTarget, TransientStep, WorkflowProgress, Workflows } from "../workflows/api.js";
import type { CallProgress } from "./progress.js";

/** A step of a transient workflow, as subagents_workflow takes it (a TOML `[[steps]]` table as JSON). */
export type StepArg = TransientStep;

/** Arguments of subagents_workflow (checked against its schema before the handler runs). */
export interface WorkflowArgs {
  name?: string;
  steps?: StepArg[];
  /** A model-written program: the body of `async (ctx, input) => …`, run in the QuickJS sandbox. */
  source?: string;
  input?: string;
  await?: boolean;
  runId?: string;
  /** Leave each step's child open after its step settles (default: closed, still resumable). */
  keep?: boolean;
}

/** What the handler needs besides its arguments (a subset of the tools' CallContext). */
export interface WorkflowCall {
  m: Muster;
  signal: AbortSignal;
  abortReason(): Promise<"cancelled" | "closed">;
  progress: CallProgress;
  runs: WorkflowRuns;
}

const usage = (message: string): MusterError => new MusterError("invalid_argument", message);

/** The workflows of this Muster; the engine (smol-toml among it) loads only when a workflow is first used. */
export async function workflowsOf(m: Muster): Promise<Workflows> {
  const { createWorkflows } = await import("../workflows/api.js");
  return createWorkflows(m);
}

/** A run this server process started: it goes on after the call that started it returns (await false). */
export interface LiveRun {
  runId: string;
  /** The tool's answer once the run has settled. */
  done: Promise<object>;
  result?: object;
  controller: AbortController;
  /** Progress lines (a step started or settled, a program's log line) for the calls following the run. */
  listeners: Set<(line: string) => void>;
  /** Lines said before the starting call began to follow (a program logs at once); its follow says them first. */
  backlog?: string[];
}

/** How a run is started: its progress lines, the run id once recorded, and its answer when it settles. */
export type Begin = (
  signal: AbortSignal,
  say: (line: string) => void,
  started: (runId: string) => void,
) => Promise<{ runId: string; answer: object }>;

/** Most settled runs kept in memory; older ones are read back from their run directory. */
const KEEP_SETTLED = 50;

/** The workflow runs of one MCP server: started here, followed by any later call, awaited before it exits. */
export class WorkflowRuns {
  private readonly live = new Map<string, LiveRun>();

  /** Starts any run (see Begin); resolves once its id is known, rejects when it fails before that. */
  async track(begin: Begin): Promise<LiveRun> {
    const controller = new AbortController();
    const listeners = new Set<(line: string) => void>();
    const backlog: string[] = [];
    let started!: (id: string) => void;
    const id = new Promise<string>((resolve) => {
      started = resolve;
    });
    let run: LiveRun | undefined;
    const settled = begin(
      controller.signal,
      (line) => {
        if ((!run || run.backlog) && backlog.length < 500) backlog.push(line);
        for (const l of listeners) l(line);
      },
      (runId) => started(runId),
    );
    const runId = await Promise.race([id, settled.then((r) => r.runId)]);
    const done = settled.then((r) => r.answer);
    run = { runId, done, controller, listeners, backlog };
    this.live.set(runId, run);
    done.then(
      (r) => {
        run.result = r;
        this.forgetOld();
      },
      () => {},
    );
    return run;
  }

  get(runId: string): LiveRun | undefined {
    return this.live.get(runId);
  }

  /** Resolves once every run started here has settled. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.live.values()].map((r) => r.done));
  }

  private forgetOld(): void {
    const settled = [...this.live.values()].filter((r) => r.result);
    for (const r of settled.slice(0, Math.max(0, settled.length - KEEP_SETTLED))) this.live.delete(r.runId);
  }
}

/** One progress line per run event: the steps (a code run's ctx.agent calls) starting and settling, phases, logs. */
function progressLine(p: WorkflowProgress): string | undefined {
  switch (p.type) {
    case "run_started":
      return undefined; // the call says it once it follows the run
    case "step_started":
      return `step ${p.stepId} started: child ${shortId(p.childId)} (${p.agent})`;
    case "agent_started":
      return `step ${p.id} started: child ${shortId(p.childId)} (${p.agent})`;
    case "step_paused":
      return `step ${p.stepId} paused with the tree: ${p.reason}`;
    case "step_settled":
    case "agent_settled":
    case "agent_replayed": {
      const s = p.type === "step_settled" ? p.step : p.result;
      return `step ${s.id} ${s.status}${s.reason ? `: ${s.reason}` : ""}`;
    }
    case "replay_ended":
      return `replay ended at ${p.id}`;
    case "phase":
      return `phase ${p.name}`;
    case "log":
      return p.text.trim() === "" ? undefined : `log: ${p.text}`;
  }
}

/** How a run starts, for WorkflowRuns.track: the facade runs it; its answer is the run as the facade gives it. */
function begin(wf: Workflows, target: RunTarget, input: string, keep: boolean): Begin {
  return async (signal, say, started) => {
    const r = await wf.run(target, input, {
      signal,
      keep,
      onProgress: (p) => {
        if (p.type === "run_started") started(p.runId);
        const line = progressLine(p);
        if (line !== undefined) say(line);
      },
    });
    return { runId: r.runId, answer: r };
  };
}

/** Waits for a live run, reporting its steps as this call's progress; undefined when the call was aborted first. */
async function follow(run: LiveRun, ctx: WorkflowCall): Promise<object | undefined> {
  const say = (line: string): void => ctx.progress.say(line);
  for (const line of run.backlog ?? []) say(line);
  delete run.backlog;
  run.listeners.add(say);
  let onAbort = (): void => {};
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    if (ctx.signal.aborted) resolve(undefined);
    else ctx.signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([run.done, aborted]);
  } finally {
    run.listeners.delete(say);
    ctx.signal.removeEventListener("abort", onAbort);
  }
}

/** `{runId}`: a run's result (awaited unless `await` is false), or, for a run not started here, its record. */
async function existing(a: WorkflowArgs, ctx: WorkflowCall) {
  if (a.input !== undefined) throw usage("input goes with name, steps or source, not runId");
  const wf = await workflowsOf(ctx.m);
  const runId = wf.resolve(a.runId!);
  const run = ctx.runs.get(runId);
  if (!run) return wf.status(runId);
  if (run.result) return run.result;
  if (a.await !== false) {
    ctx.progress.say(`waiting for workflow run ${shortId(runId)}`);
    const r = await follow(run, ctx);
    if (r) return r;
  }
  // Not awaited, or this call was cancelled (the run itself goes on): where it stands now.
  return wf.status(runId);
}

/** No arguments: the workflows a name can run (the model does not see the prompts that list them). */
async function found(ctx: WorkflowCall) {
  const d = (await workflowsOf(ctx.m)).list();
  return {
    workflows: d.workflows.map((w) => ({
      name: w.name,
      ...(w.kind === "code" ? { kind: "code" } : {}),
      description: w.description,
      steps: w.steps.map((s) => ({
        id: s.id,
        agent: s.agent,
        ...(s.needs.length ? { needs: s.needs } : {}),
      })),
    })),
    ...(d.warnings.length > 0 ? { warnings: d.warnings } : {}),
  };
}

/**
 * subagents_workflow: runs a discovered workflow (name), a transient step list (steps) or a sandboxed
 * program (source), follows a run (runId), or with no arguments lists the workflows found. A settled run
 * answers as the facade gives it, the same object `muster workflow run --json` prints.
 */
export async function workflow(a: WorkflowArgs, ctx: WorkflowCall) {
  if (Object.keys(a).length === 0) return found(ctx);
  const given = [a.name, a.steps, a.source, a.runId].filter((v) => v !== undefined).length;
  if (given !== 1)
    throw usage("give exactly one of name, steps, source or runId (or nothing: the workflows found)");
  if (a.runId !== undefined) return existing(a, ctx);
  const wf = await workflowsOf(ctx.m);
  // `{name}`: a name only; files are for the trusted CLI, not for a tool call.
  const target: RunTarget =
    a.source !== undefined
      ? { program: a.source }
      : a.name !== undefined
        ? { name: a.name }
        : { steps: a.steps! };
  const run = await ctx.runs.track(begin(wf, target, a.input ?? "", a.keep === true));
  if (a.await === false)
    return { runId: run.runId, workflow: wf.status(run.runId).workflow, status: "running" };
  ctx.progress.say(`workflow run ${shortId(run.runId)} started`);
  const r = await follow(run, ctx);
  if (r) return r;
  // The client cancelled this call: cancel the run (its running children, nothing more starts). A closed
  // connection leaves the run going: the server awaits it before it exits.
  if ((await ctx.abortReason()) === "cancelled") run.controller.abort();
  return wf.status(run.runId);
}
