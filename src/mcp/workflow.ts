import { MusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import { shortId } from "../util/ids.js";
import type { HostOptions } from "../workflows/host.js";
import type { Progress, RunResult, StepResult } from "../workflows/run.js";
import type { WorkflowDef, WorkflowStep } from "../workflows/toml.js";
import type { CallProgress } from "./progress.js";
import { beginCode } from "./workflow-code.js";
import { beginProgram } from "./workflow-program.js";

/** A step of a transient workflow, as subagents_workflow takes it (a TOML `[[steps]]` table as JSON). */
export interface StepArg {
  id: string;
  agent: string;
  prompt: string;
  needs?: string[];
  model?: string;
  reasoning?: string;
}

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

/** The name a transient step list runs under (its run record and `muster workflow runs` show it). */
export const TRANSIENT = "transient";

const usage = (message: string): MusterError => new MusterError("invalid_argument", message);

/** The workflow modules (smol-toml among them) load only when a workflow is first used. */
export const engine = async () => {
  const [discover, host, run, log] = await Promise.all([
    import("../workflows/discover.js"),
    import("../workflows/host.js"),
    import("../workflows/run.js"),
    import("../workflows/run-log.js"),
  ]);
  return { ...discover, ...host, ...run, ...log };
};

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

  /**
   * Starts a TOML run; resolves once it is recorded (its run id known). A definition that does not validate
   * rejects here, with nothing started.
   */
  async start(m: Muster, def: WorkflowDef, input: string, host: HostOptions = {}): Promise<LiveRun> {
    const { runWorkflow, musterHost } = await engine();
    return this.track(async (signal, say, started) => {
      const r = await runWorkflow(musterHost(m, host), def, input, {
        signal,
        onProgress: (p) => {
          if (p.type === "run_started") started(p.runId);
          say(progressLine(p));
        },
      });
      return { runId: r.runId, answer: shapeRun(r) };
    });
  }

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

/** A transient step list as a workflow definition (checked like a TOML file when the run starts). */
function transient(steps: StepArg[]): WorkflowDef {
  return {
    name: TRANSIENT,
    description: "",
    source: "<transient steps>",
    steps: steps.map(
      (s): WorkflowStep => ({
        id: s.id,
        agent: s.agent,
        prompt: s.prompt,
        needs: s.needs ?? [],
        ...(s.model !== undefined ? { model: s.model } : {}),
        ...(s.reasoning !== undefined ? { reasoning: s.reasoning } : {}),
      }),
    ),
  };
}

/** One progress line per run event: the steps starting and settling. */
function progressLine(p: Progress): string {
  if (p.type === "run_started") return `workflow run ${shortId(p.runId)} started`;
  if (p.type === "step_started") return `step ${p.stepId} started: child ${shortId(p.childId)} (${p.agent})`;
  const s = p.step;
  return `step ${s.id} ${s.status}${s.reason ? `: ${s.reason}` : ""}`;
}

/** A step in the tool's answer: `output` is its answer (the results carry it), `error` why it did not complete. */
function shapeStep(s: StepResult, withOutput: boolean) {
  return {
    id: s.id,
    agent: s.agent,
    status: s.status,
    ...(s.childId ? { childId: s.childId } : {}),
    ...(withOutput && s.text !== undefined ? { output: s.text } : {}),
    ...(s.status !== "completed" ? { error: s.reason ?? s.status } : {}),
    ...(s.cause ? { cause: s.cause } : {}),
  };
}

/** A settled run: every step in declaration order, and the terminal steps' answers as `results`. */
export function shapeRun(r: RunResult) {
  return {
    runId: r.runId,
    workflow: r.workflow,
    status: r.status,
    steps: r.steps.map((s) => shapeStep(s, false)),
    results: r.results.map((s) => shapeStep(s, true)),
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
  const { resolveRunId, readRun } = await engine();
  const runId = resolveRunId(ctx.m.paths.dir, a.runId!);
  const run = ctx.runs.get(runId);
  if (!run) return readRun(ctx.m.paths.dir, runId);
  if (run.result) return run.result;
  if (a.await !== false) {
    ctx.progress.say(`waiting for workflow run ${shortId(runId)}`);
    const r = await follow(run, ctx);
    if (r) return r;
  }
  // Not awaited, or this call was cancelled (the run itself goes on): where it stands now.
  return readRun(ctx.m.paths.dir, runId);
}

/** No arguments: the workflows a name can run (the model does not see the prompts that list them). */
async function found(ctx: WorkflowCall) {
  const { discoverWorkflows } = await engine();
  const d = discoverWorkflows(ctx.m.cwd, ctx.m.env);
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
 * program (source), follows a run
 * (runId), or with no arguments lists the workflows found.
 */
export async function workflow(a: WorkflowArgs, ctx: WorkflowCall) {
  if (Object.keys(a).length === 0) return found(ctx);
  const given = [a.name, a.steps, a.source, a.runId].filter((v) => v !== undefined).length;
  if (given !== 1)
    throw usage("give exactly one of name, steps, source or runId (or nothing: the workflows found)");
  if (a.runId !== undefined) return existing(a, ctx);
  let run: LiveRun;
  let name = "sandbox";
  const host: HostOptions = { keep: a.keep === true };
  if (a.source !== undefined)
    run = await ctx.runs.track(await beginProgram(ctx.m, a.source, a.input ?? "", host));
  else {
    let def: WorkflowDef & { kind?: "toml" | "code" };
    if (a.name !== undefined) {
      // A name only: files are for the trusted CLI, not for a tool call.
      if (a.name.includes("/") || a.name.endsWith(".toml"))
        throw usage(`name ${JSON.stringify(a.name)} must be a workflow name, not a file`);
      const { loadWorkflow } = await engine();
      const named = loadWorkflow(a.name, ctx.m.cwd, ctx.m.env);
      def = named;
    } else def = transient(a.steps!);
    name = def.name;
    run =
      def.kind === "code"
        ? await ctx.runs.track(await beginCode(ctx.m, def, a.input ?? "", host))
        : await ctx.runs.start(ctx.m, def, a.input ?? "", host);
  }
  if (a.await === false) return { runId: run.runId, workflow: name, status: "running" };
  ctx.progress.say(`workflow run ${shortId(run.runId)} started`);
  const r = await follow(run, ctx);
  if (r) return r;
  // The client cancelled this call: cancel the run (its running children, nothing more starts). A closed
  // connection leaves the run going: the server awaits it before it exits.
  if ((await ctx.abortReason()) === "cancelled") run.controller.abort();
  const { readRun } = await engine();
  return readRun(ctx.m.paths.dir, run.runId);
}
