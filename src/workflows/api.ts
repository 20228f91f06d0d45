/**
 * The one way to drive workflows: list, run (TOML, code module or sandboxed program, told apart here), status,
 * cancel and resume, over one Muster. The CLI, the MCP server and library users call this, never the engine's
 * modules, and get the same plain, JSON-safe data. It lives here, not on the core: the core imports no front
 * end, and the workflow engine is one (docs/architecture.md).
 */
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import { readJsonIfExists } from "../util/fsx.js";
import { readFileBounded } from "../util/safe-read.js";
import { cancelRun } from "./cancel.js";
import type { CodeProgress, CodeRunResult } from "./code/code-types.js";
import { resumeWorkflow } from "./dag/resume.js";
import { type Progress, type RunResult, runWorkflow, type StepResult } from "./dag/run.js";
import type { WorkflowDef, WorkflowStep } from "./dag/toml.js";
import { discoverWorkflows, type LoadedWorkflow, loadWorkflow, type WorkflowLayer } from "./discover.js";
import { musterHost } from "./host.js";
import { type CodeDef, listRuns, type RunView, readRun, resolveRunId, runFiles, runKind } from "./run-log.js";

export type { RunView } from "./run-log.js";

/** A program is short: the bound on a sandboxed program's text, given as a file or as text. */
const MAX_PROGRAM_BYTES = 1024 * 1024;

/** A discovered workflow as `list` shows it: the file that won its name, and the files it shadows. */
export interface WorkflowSummary {
  name: string;
  kind: "toml" | "code";
  description: string;
  layer: WorkflowLayer;
  source: string;
  /** A TOML workflow's steps (a code workflow's are known only as it runs). */
  steps: { id: string; agent: string; needs: string[] }[];
  shadows: { source: string; layer: WorkflowLayer }[];
}

export interface WorkflowList {
  /** Sorted by name. */
  workflows: WorkflowSummary[];
  /** Files that could not be read as workflows, and folders that could not be searched. */
  warnings: string[];
  /** The folders searched, lowest precedence first. */
  dirs: { layer: WorkflowLayer; dir: string }[];
}

/**
 * A settled run, whatever ran it. `steps`: every step in declaration order (TOML) or every ctx.agent call in
 * call order (code, sandbox: `agent-<n>`), each with `reason` when it did not complete, its answer as `text`
 * and a structured step's decoded `output`. A TOML run's answer is `results` (its terminal steps); a code
 * run's is `result` (what its function returned) or `error` (why it threw).
 */
export interface WorkflowResult {
  runId: string;
  workflow: string;
  kind: "toml" | "code" | "sandbox";
  status: "completed" | "failed" | "cancelled";
  /** The run's record: `<primary>/workflows/<run id>/`. */
  dir: string;
  steps: StepResult[];
  results?: StepResult[];
  result?: unknown;
  error?: string;
}

/** A TOML run's progress (`step_*`) or a code run's (`agent_*`, phases, log lines); both begin `run_started`. */
export type WorkflowProgress = Progress | CodeProgress;

/** A step of a transient TOML workflow (a `[[steps]]` table as data). */
export interface TransientStep {
  id: string;
  agent: string;
  prompt: string;
  needs?: string[];
  model?: string;
  reasoning?: string;
}

/**
 * What `run` runs: a workflow name, a `.toml` file or a trusted code module (`.mjs`, `.js`, `.cjs`, run in a
 * worker thread of its own); `{name}`, a discovered workflow by name only (never a file: what an untrusted
 * caller may name); a transient step list; or a model-written program's text (the body of
 * `async (ctx, input) => …`), run untrusted in the QuickJS sandbox.
 */
export type RunTarget =
  | string
  | { name: string }
  | { steps: TransientStep[]; name?: string }
  | { program: string; name?: string };

export interface WorkflowRunOptions {
  /** Aborting cancels the run: nothing more starts, its running steps' children are cancelled. */
  signal?: AbortSignal;
  onProgress?: (p: WorkflowProgress) => void;
  /** Leave each step's child open (idle in its pane) after its step settles; by default it is closed. */
  keep?: boolean;
  /** A TOML run's steps in flight at once (default: the primary's run slots). */
  concurrency?: number;
  /** A string target is a file of program text, run untrusted in the sandbox (never imported). */
  sandbox?: boolean;
}

export type WorkflowResumeOptions = Omit<WorkflowRunOptions, "sandbox">;

export interface Workflows {
  /** The workflows a name can run, from the bundled, user and project folders. */
  list(): WorkflowList;
  /** One workflow by name (or `.toml` file): its definition, or a code workflow's file. Throws when unknown. */
  load(ref: string): LoadedWorkflow;
  /** Runs a workflow to its end (see RunTarget). A definition that does not validate throws, starting nothing. */
  run(target: RunTarget, input?: string, opts?: WorkflowRunOptions): Promise<WorkflowResult>;
  /** This primary's runs, oldest first. */
  runs(): RunView[];
  /** The full id of a run given by id, or a unique prefix or suffix. */
  resolve(ref: string): string;
  /** A run as its record shows it now (`interrupted` when its runner is gone). */
  status(ref: string): RunView;
  /** Cancels a run from any process: nothing more starts, its running steps' children are cancelled. */
  cancel(ref: string): Promise<RunView>;
  /** Runs again a run that is not running (interrupted, cancelled, failed), under the same id. */
  resume(ref: string, opts?: WorkflowResumeOptions): Promise<WorkflowResult>;
}

/** A code workflow (trusted JS, run in this process) is named by its file. */
const isCodeFile = (ref: string): boolean => /\.(mjs|js|cjs)$/.test(ref);

/** The workflows of one Muster (its working directory, environment and primary). */
export function createWorkflows(m: Muster): Workflows {
  const host = (o: { keep?: boolean | undefined } = {}) => musterHost(m, { keep: !!o.keep });

  const runToml = async (def: WorkflowDef, input: string, o: WorkflowRunOptions): Promise<WorkflowResult> =>
    tomlResult(
      await runWorkflow(host(o), def, input, {
        ...(o.signal ? { signal: o.signal } : {}),
        ...(o.onProgress ? { onProgress: o.onProgress } : {}),
        ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      }),
    );

  const runModule = async (file: string, name: string, input: string, o: WorkflowRunOptions) => {
    const [{ runCodeWorkflow }, { loadInWorker }] = await Promise.all([
      import("./code/code.js"),
      import("./code/code-worker.js"),
    ]);
    // Trusted code runs in a thread of its own: a busy loop or process.exit in it cannot take muster with it.
    const worker = await loadInWorker(file, o.signal);
    try {
      return codeResult(
        await runCodeWorkflow(host(o), name, worker.fn, input, {
          ...codeOpts(o),
          origin: { kind: "code", file },
        }),
        "code",
      );
    } finally {
      await worker.stop();
    }
  };

  const runProgram = async (program: string, name: string, input: string, o: WorkflowRunOptions) => {
    const { runSandboxed } = await import("./sandbox/sandbox.js");
    return codeResult(await runSandboxed(program, input, host(o), { name, ...codeOpts(o) }), "sandbox");
  };

  const load = (ref: string): LoadedWorkflow => loadWorkflow(ref, m.cwd, m.env);

  return {
    list: () => {
      const d = discoverWorkflows(m.cwd, m.env);
      return {
        workflows: d.workflows.map((w) => ({
          name: w.name,
          kind: w.kind,
          description: w.description,
          layer: w.layer,
          source: w.source,
          steps: w.steps.map((s) => ({ id: s.id, agent: s.agent, needs: s.needs })),
          shadows: w.shadows,
        })),
        warnings: d.warnings,
        dirs: d.dirs,
      };
    },

    load,

    run: async (target, input = "", o = {}) => {
      if (typeof target !== "string") {
        if ("steps" in target) return runToml(transient(target.steps, target.name), input, o);
        if ("program" in target) {
          checkProgram(target.program);
          return runProgram(target.program, target.name ?? "sandbox", input, o);
        }
        if (target.name.includes("/") || target.name.endsWith(".toml"))
          throw new MusterError(
            "invalid_argument",
            `name ${JSON.stringify(target.name)} must be a workflow name, not a file`,
          );
      } else if (o.sandbox || isCodeFile(target)) {
        const file = path.resolve(m.cwd, target);
        const name = path.basename(file).replace(/\.[cm]?js$/, "");
        return o.sandbox ? runProgram(readProgram(file), name, input, o) : runModule(file, name, input, o);
      }
      const def = load(typeof target === "string" ? target : target.name);
      // A code workflow found by name runs from the file that won the name, under that name.
      return def.kind === "code" ? runModule(def.source, def.name, input, o) : runToml(def, input, o);
    },

    runs: () => listRuns(m.paths.dir),

    resolve: (ref) => resolveRunId(m.paths.dir, ref),

    status: (ref) => readRun(m.paths.dir, resolveRunId(m.paths.dir, ref)),

    cancel: async (ref) => cancelRun(host(), resolveRunId(m.paths.dir, ref)),

    resume: async (ref, o = {}) => {
      const runId = resolveRunId(m.paths.dir, ref);
      const kind = runKind(m.paths.dir, runId);
      if (kind === "toml")
        return tomlResult(
          await resumeWorkflow(host(o), runId, {
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.onProgress ? { onProgress: o.onProgress } : {}),
            ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
          }),
        );
      const [{ resumeCodeWorkflow }, { loadInWorker }] = await Promise.all([
        import("./code/code-resume.js"),
        import("./code/code-worker.js"),
      ]);
      const def = readJsonIfExists<CodeDef>(runFiles(m.paths.dir, runId).workflow);
      // A module's run runs its function in a thread of its own again (see runModule).
      const worker = def?.kind === "code" && def.file ? await loadInWorker(def.source, o.signal) : undefined;
      try {
        return codeResult(
          await resumeCodeWorkflow(host(o), runId, {
            ...codeOpts(o),
            ...(worker ? { fn: worker.fn } : {}),
          }),
          kind,
        );
      } finally {
        await worker?.stop();
      }
    },
  };
}

function codeOpts(o: WorkflowRunOptions) {
  return {
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  };
}

function tomlResult(r: RunResult): WorkflowResult {
  return {
    runId: r.runId,
    workflow: r.workflow,
    kind: "toml",
    status: r.status,
    dir: r.dir,
    steps: r.steps,
    results: r.results,
  };
}

function codeResult(r: CodeRunResult, kind: "code" | "sandbox"): WorkflowResult {
  return {
    runId: r.runId,
    workflow: r.workflow,
    kind,
    status: r.status,
    dir: r.dir,
    steps: r.steps,
    ...(r.result !== undefined ? { result: r.result } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
  };
}

/** The name a transient step list runs under (its run record and `muster workflow runs` show it). */
export const TRANSIENT = "transient";

/** A transient step list as a workflow definition (checked like a TOML file when the run starts). */
function transient(steps: TransientStep[], name = TRANSIENT): WorkflowDef {
  return {
    name,
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

function checkProgram(source: string): void {
  if (source.trim() === "")
    throw new MusterError("invalid_argument", "source is empty: give the program's text");
  if (Buffer.byteLength(source) > MAX_PROGRAM_BYTES)
    throw new MusterError("invalid_argument", "source is larger than 1 MiB: a program here is a short one");
}

/** A sandboxed program's text from its file (at most 1 MiB); a missing file is a clear error. */
function readProgram(file: string): string {
  try {
    return readFileBounded(file, MAX_PROGRAM_BYTES, { follow: true }).toString("utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT")
      throw new MusterError("invalid_argument", `no such file: ${file}`);
    throw e;
  }
}
