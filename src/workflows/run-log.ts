import * as fs from "node:fs";
import * as path from "node:path";
import { readAllRecords } from "../artifacts/reader.js";
import { MusterError } from "../base/errors.js";
import {
  appendJsonLines,
  ensureDir,
  readJson,
  readJsonIfExists,
  writeFileAtomic,
  writeJsonAtomic,
} from "../util/fsx.js";
import { assertIdOrPrefix, isFullId } from "../util/ids.js";
import type { WorkflowDef } from "./dag/toml.js";

/** What a code workflow's run records as its definition: how `workflow resume` finds the function again. */
export interface CodeDef {
  name: string;
  description: string;
  steps: [];
  /** The module (code) or program (sandbox) file, or the name given to the library. */
  source: string;
  /** "code": a module, imported again from `source`; "sandbox": the program kept in `program.js`. */
  kind: "code" | "sandbox";
  /** Whether `source` is a file resume can import (false for a function handed to the library). */
  file: boolean;
}

export type StepStatus =
  | "completed"
  | "errored"
  | "cancelled"
  | "exhausted"
  | "incomplete"
  | "lost"
  | "interrupted"
  | "failed_verification"
  | "skipped";
export type RunStatus = "running" | "paused" | "completed" | "failed" | "cancelled" | "interrupted";

/** One record of a run's `events.ndjson` (append + fsync, one line each). */
export type RunEvent = { v: 1; seq: number; ts: string } & (
  | {
      type: "run_started";
      runId: string;
      workflow: string;
      source: string;
      /** The runner process, and its start time (see processStart) so a reused pid is not taken for it. */
      pid: number;
      pidStart?: string;
      steps: string[];
    }
  | {
      type: "step_started";
      stepId: string;
      childId: string;
      turnId: string;
      agent: string;
      /** A code workflow's call: the key of its arguments (see replay.ts), and the phase it started in. */
      key?: string;
      phase?: string;
      /** A best-of step: its run's group and every candidate (childId is the first). */
      group?: string;
      candidates?: string[];
    }
  /** A structured worker's corrective turn (its first answer did not match the output schema). */
  | { type: "step_retried"; stepId: string; turnId: string }
  /**
   * A step's child failed on a provider's quota or a refused credential: the tree is paused, and so is the
   * run (no step starts); once the pause lifts the step runs again on the same child (its conversation kept).
   */
  | {
      type: "step_paused";
      stepId: string;
      childId: string;
      kind: string;
      reason: string;
      resetAt?: string;
    }
  /** The pause lifted: the paused step runs again, as `turnId` of its child. */
  | { type: "step_continued"; stepId: string; childId: string; turnId: string }
  | {
      type: "step_settled";
      stepId: string;
      status: StepStatus;
      childId?: string;
      reason?: string;
      /** For a skipped step: the dependency that did not complete. */
      cause?: { stepId: string; status: StepStatus };
      /** The answer, copied to `outputs/<stepId>.md`. */
      output?: { path: string; bytes: number };
      /** A code workflow's call: the key of its arguments; a completed one's result is in `calls/<stepId>.json`. */
      key?: string;
      /** A structured worker: how its schema was held ("native": the runner's CLI; "instructed": the prompt). */
      structured?: "native" | "instructed";
      /** A structured worker's answer refused after its corrective retry: one line per schema error. */
      errors?: string[];
    }
  /** A code workflow entered a phase (`ctx.phase(name)`). */
  | { type: "phase"; name: string }
  /** A resumed code workflow stopped answering calls from the log at this call; from here children run. */
  | { type: "replay_ended"; stepId: string; replayed: number; reason: string }
  | { type: "cancel_requested" }
  | {
      type: "run_resumed";
      /** The new runner process (see run_started). */
      pid: number;
      pidStart?: string;
      /** Steps that will be waited for or run again (every step that had not completed). */
      rerun: string[];
    }
  | { type: "run_settled"; status: Exclude<RunStatus, "running" | "paused" | "interrupted"> }
);

type Body<T> = T extends unknown ? Omit<T, "v" | "seq" | "ts"> : never;
export type RunEventInput = Body<RunEvent>;
type StepSettled = Extract<RunEventInput, { type: "step_settled" }>;

/** The `step_settled` record of a step's (or a code workflow's call's) result, with what only its runner knows. */
export function stepSettled(
  r: Pick<StepSettled, "status" | "childId" | "reason" | "cause" | "structured" | "errors"> & { id: string },
  extra: Pick<StepSettled, "output" | "key"> = {},
): StepSettled {
  return {
    type: "step_settled",
    stepId: r.id,
    status: r.status,
    ...(r.childId ? { childId: r.childId } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.cause ? { cause: r.cause } : {}),
    ...(extra.output ? { output: extra.output } : {}),
    ...(r.structured ? { structured: r.structured } : {}),
    ...(r.errors ? { errors: r.errors } : {}),
    ...(extra.key !== undefined ? { key: extra.key } : {}),
  };
}

/** Files of one run: `<primary dir>/workflows/<run id>/`. */
export function runFiles(stateDir: string, runId: string) {
  const dir = path.join(runsDir(stateDir), runId);
  return {
    dir,
    events: path.join(dir, "events.ndjson"),
    input: path.join(dir, "input.txt"),
    workflow: path.join(dir, "workflow.json"),
    /** Created by `muster workflow cancel`: the runner starts nothing more and cancels its children. */
    cancel: path.join(dir, "cancel"),
    output: (stepId: string) => path.join(dir, "outputs", `${stepId}.md`),
  };
}
export type RunFiles = ReturnType<typeof runFiles>;

export const runsDir = (stateDir: string): string => path.join(stateDir, "workflows");

/** The writer of one run's event log; seq strictly increasing. */
export class RunLog {
  private seq = 0;
  constructor(readonly files: RunFiles) {}

  /** Creates the run directory with its input and definition (crash-safe writes). */
  static create(files: RunFiles, def: WorkflowDef | CodeDef, input: string): RunLog {
    ensureDir(path.join(files.dir, "outputs"));
    writeFileAtomic(files.input, input);
    writeJsonAtomic(files.workflow, def);
    return new RunLog(files);
  }

  /** Continues an existing run's log (e.g. `muster workflow cancel` settling a run whose runner is gone). */
  static open(files: RunFiles): RunLog {
    const log = new RunLog(files);
    for (const r of readAllRecords<{ seq?: unknown }>(files.events))
      if (typeof r.seq === "number" && r.seq > log.seq) log.seq = r.seq;
    return log;
  }

  private pending: RunEvent[] | undefined;

  append(e: RunEventInput): RunEvent {
    this.seq += 1;
    const record = { v: 1, seq: this.seq, ts: new Date().toISOString(), ...e } as RunEvent;
    if (this.pending) this.pending.push(record);
    else appendJsonLines(this.files.events, [record]);
    return record;
  }

  /** Runs fn with its appends written together at its end (one write and fsync for a cascade of skips). */
  batch<T>(fn: () => T): T {
    if (this.pending) return fn();
    this.pending = [];
    try {
      return fn();
    } finally {
      const records = this.pending;
      this.pending = undefined;
      appendJsonLines(this.files.events, records);
    }
  }

  writeOutput(stepId: string, text: string): { path: string; bytes: number } {
    writeFileAtomic(this.files.output(stepId), text);
    return { path: `outputs/${stepId}.md`, bytes: Buffer.byteLength(text) };
  }
}

/** A run as read back from its directory. */
export interface RunView {
  runId: string;
  workflow: string;
  source: string;
  status: RunStatus;
  /** A code workflow's latest `ctx.phase`. */
  phase?: string;
  startedAt?: string;
  settledAt?: string;
  steps: {
    id: string;
    /** `queued`: every need completed, waiting for one of the run's in-flight places (its concurrency). */
    status: StepStatus | "pending" | "queued" | "running" | "paused";
    childId?: string;
    phase?: string;
    reason?: string;
    cause?: { stepId: string; status: StepStatus };
    output?: string;
    structured?: "native" | "instructed";
    errors?: string[];
  }[];
}

/** A process's start time in clock ticks since boot (/proc/<pid>/stat field 22), to tell a reused pid apart. */
export function processStart(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count fields after the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? "zombie" : fields[19];
  } catch {
    return undefined;
  }
}

/** Whether the runner that wrote run_started still runs: its pid exists and (with /proc) started when it did. */
function runnerAlive(pid: number, start: string | undefined): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  const now = processStart(pid);
  if (now === "zombie") return false;
  return start === undefined || now === undefined || now === start;
}

/** Folds a run's events; a run with no `run_settled` whose runner process is gone is `interrupted`. */
export function readRun(stateDir: string, runId: string): RunView {
  const files = runFiles(stateDir, runId);
  const events = readAllRecords<RunEvent>(files.events);
  const start = events.find((e) => e.type === "run_started");
  if (!start || start.type !== "run_started")
    throw new MusterError("not_found", `workflow run ${runId} has no run_started record`);
  const steps = new Map<string, RunView["steps"][number]>(
    start.steps.map((id) => [id, { id, status: "pending" as const }]),
  );
  let status: RunStatus = "running";
  let phase: string | undefined;
  let settledAt: string | undefined;
  let runner = { pid: start.pid, pidStart: start.pidStart };
  for (const e of events) {
    // A code workflow's steps (its ctx.agent calls) are known only as they start.
    const step = (id: string) => {
      if (!steps.has(id)) steps.set(id, { id, status: "pending" });
      return steps.get(id)!;
    };
    if (e.type === "step_started") {
      Object.assign(step(e.stepId), { status: "running", childId: e.childId });
      if (e.phase) step(e.stepId).phase = e.phase;
    } else if (e.type === "step_paused") {
      const resets = e.resetAt ? `, until ${e.resetAt}` : "";
      Object.assign(step(e.stepId), { status: "paused", reason: `paused (${e.kind}): ${e.reason}${resets}` });
    } else if (e.type === "step_continued") {
      const s = step(e.stepId);
      s.status = "running";
      delete s.reason;
    } else if (e.type === "phase") {
      phase = e.name;
    } else if (e.type === "step_settled") {
      const s = step(e.stepId);
      s.status = e.status;
      if (e.childId) s.childId = e.childId;
      if (e.reason) s.reason = e.reason;
      if (e.cause) s.cause = e.cause;
      if (e.output) s.output = path.join(files.dir, e.output.path);
      if (e.structured) s.structured = e.structured;
      if (e.errors) s.errors = e.errors;
    } else if (e.type === "run_resumed") {
      status = "running";
      settledAt = undefined;
      phase = undefined;
      runner = { pid: e.pid, pidStart: e.pidStart };
      for (const id of e.rerun) {
        const s = step(id);
        s.status = "pending";
        for (const k of ["reason", "cause", "output", "structured", "errors"] as const) delete s[k];
      }
    } else if (e.type === "replay_ended") {
      // A resumed code run took its own path from this call on: later calls of earlier attempts are not its.
      const from = Number(e.stepId.slice("agent-".length));
      for (const id of [...steps.keys()])
        if (/^agent-\d+$/.test(id) && Number(id.slice("agent-".length)) >= from) steps.delete(id);
    } else if (e.type === "run_settled") {
      status = e.status;
      settledAt = e.ts;
    }
  }
  if (status === "running" && !runnerAlive(runner.pid, runner.pidStart)) status = "interrupted";
  if (status === "running") markQueued(files, steps);
  // A live run with a step held by the tree's pause is paused (resume-tree continues it).
  if (status === "running" && [...steps.values()].some((s) => s.status === "paused")) status = "paused";
  return {
    runId,
    workflow: start.workflow,
    source: start.source,
    status,
    ...(phase !== undefined ? { phase } : {}),
    startedAt: start.ts,
    ...(settledAt ? { settledAt } : {}),
    steps: [...steps.values()],
  };
}

/** A running TOML run's pending steps whose needs all completed wait for a place in flight: `queued`. */
function markQueued(files: RunFiles, steps: Map<string, RunView["steps"][number]>): void {
  let def: { steps?: { id?: unknown; needs?: unknown }[] } | undefined;
  try {
    def = readJsonIfExists(files.workflow);
  } catch {
    return; // An unreadable definition: the steps stay as the log has them.
  }
  if (!Array.isArray(def?.steps)) return;
  for (const d of def.steps) {
    const s = typeof d?.id === "string" ? steps.get(d.id) : undefined;
    if (s?.status !== "pending" || !Array.isArray(d.needs)) continue;
    if (d.needs.every((n) => steps.get(String(n))?.status === "completed")) s.status = "queued";
  }
}

/** Refuses a run that is running or has completed: only an interrupted, cancelled or failed run resumes. */
export function assertResumable(stateDir: string, runId: string): void {
  const view = readRun(stateDir, runId);
  if (view.status === "paused")
    throw new MusterError(
      "not_running",
      `workflow run ${runId} is paused with its tree (a provider's quota or credential); muster resume-tree continues it`,
    );
  if (view.status === "running")
    throw new MusterError(
      "not_running",
      `workflow run ${runId} is still running; cancel it first to resume it`,
    );
  if (view.status === "completed")
    throw new MusterError("not_running", `workflow run ${runId} has completed; there is nothing to resume`);
}

/** What kind of workflow a run ran: a TOML DAG, a code module, or a sandboxed program. */
export function runKind(stateDir: string, runId: string): "toml" | "code" | "sandbox" {
  const files = runFiles(stateDir, runId);
  const def = fs.existsSync(files.workflow) ? readJson<Partial<CodeDef>>(files.workflow) : undefined;
  if (def?.kind === "code" || def?.kind === "sandbox") return def.kind;
  if (Array.isArray(def?.steps) && def.steps.length > 0) return "toml";
  throw new MusterError(
    "unsupported",
    `workflow run ${runId} was recorded before code workflow runs could be resumed; start it again`,
  );
}

/** Every run of this primary, oldest first (run ids are UUIDv7). */
export function listRuns(stateDir: string): RunView[] {
  let names: string[];
  try {
    names = fs.readdirSync(runsDir(stateDir));
  } catch {
    return [];
  }
  const out: RunView[] = [];
  for (const n of names.filter(isFullId).sort()) {
    try {
      out.push(readRun(stateDir, n));
    } catch {
      // A run directory without its first record (a crash while creating it) is not a run.
    }
  }
  return out;
}

/** A run id as a user gives it: full, or a unique prefix or suffix (at least 4 hex digits). */
export function resolveRunId(stateDir: string, ref: string): string {
  const want = assertIdOrPrefix(ref, "workflow run id");
  let names: string[] = [];
  try {
    names = fs.readdirSync(runsDir(stateDir)).filter(isFullId);
  } catch {}
  if (names.includes(want)) return want;
  const matches = names.filter((n) => n.startsWith(want) || n.endsWith(want));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1)
    throw new MusterError(
      "invalid_argument",
      `workflow run "${ref}" is ambiguous: ${matches.sort().join(", ")}`,
    );
  throw new MusterError("not_found", `no workflow run ${ref} in this primary`, {
    next: { action: "workflow_runs" },
  });
}
