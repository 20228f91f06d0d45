import { parse, TomlError } from "smol-toml";
import { parseRestart, RESTART_RULE } from "../../artifacts/restart.js";
import type { ContainerRequest } from "../../base/container-request.js";
import { MusterError } from "../../base/errors.js";
import type { VerifyRequest } from "../../base/verify-request.js";
import { BEST_OF_CONFLICT, bestOfConflict } from "../../core/best-of.js";
import { durationMs } from "../../util/duration.js";
import { compileOutput, type OutputSpec } from "../structured.js";

/** One step of a TOML workflow: a child started with `agent` once every step in `needs` has completed. */
export interface WorkflowStep {
  id: string;
  agent: string;
  prompt: string;
  /** Steps whose outputs this one receives, in this order. */
  needs: string[];
  model?: string;
  reasoning?: string;
  /** The SSH host its child runs on (`muster hosts add`), or `any`; default this machine. */
  on?: string;
  /** Or a container of its own: `container = "<image>"`, or a table of the container's fields. */
  container?: ContainerRequest;
  /** `on-lost[:N]`: its child's turn is restarted when its host or agent dies (see `muster spawn --restart`). */
  restart?: string;
  /** The acceptance check its child's answer must pass: a command line, an argv, or {command, retries, timeout}. */
  verify?: VerifyRequest;
  /** Makes the step a one-shot structured worker: its answer is one JSON value matching `schema`. */
  output?: OutputSpec;
  /**
   * Makes the step a best-of run: `n` candidates (or one per entry of `agents`) on its prompt, each in a
   * worktree of its own; with `judge`, that agent picks the winner, whose answer the step hands on.
   */
  bestOf?: StepBestOf;
}

/** A best-of step's candidates and judge (`best_of`, `agents`, `judge` in the file). */
export interface StepBestOf {
  n?: number;
  agents?: string[];
  judge?: string;
}

/** A validated TOML workflow (a fixed DAG of steps). */
export interface WorkflowDef {
  name: string;
  description: string;
  steps: WorkflowStep[];
  /** The file it was read from (or a label such as "<inline>"). */
  source: string;
}

/** Workflow names and step ids: they become parts of file names and command words. */
export const WORKFLOW_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

const TOP_KEYS = new Set(["name", "description", "steps"]);
const STEP_KEYS = new Set([
  "id",
  "agent",
  "prompt",
  "needs",
  "model",
  "reasoning",
  "on",
  "container",
  "verify",
  "output",
  "restart",
  "best_of",
  "agents",
  "judge",
]);

const bad = (source: string, message: string): MusterError =>
  new MusterError("invalid_config", `workflow ${source}: ${message}`);

function str(v: unknown, where: string, source: string, required: boolean): string | undefined {
  if (v === undefined) {
    if (required) throw bad(source, `${where} is missing`);
    return undefined;
  }
  if (typeof v !== "string") throw bad(source, `${where} must be a string, not ${JSON.stringify(v)}`);
  return v;
}

/**
 * Parses and validates a TOML workflow before any work: TOML syntax (with line and column), unknown keys,
 * names, duplicate step ids, unknown `needs`, and cycles (the error names one). Agents are checked separately
 * (checkAgents), against the profiles known where the workflow runs.
 */
export function parseWorkflow(text: string, source: string): WorkflowDef {
  let doc: Record<string, unknown>;
  try {
    doc = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) {
      const what = e.message.replace(/^Invalid TOML document:\s*/, "").split("\n")[0];
      throw new MusterError(
        "invalid_config",
        `workflow ${source}:${e.line}:${e.column}: invalid TOML: ${what}`,
        {
          cause: e,
        },
      );
    }
    throw bad(source, `invalid TOML: ${(e as Error).message.split("\n")[0]}`);
  }
  for (const k of Object.keys(doc)) {
    if (!TOP_KEYS.has(k)) throw bad(source, `unknown key "${k}" (known: name, description, steps)`);
  }
  const name = str(doc.name, '"name"', source, true)!;
  if (!WORKFLOW_NAME.test(name))
    throw bad(source, `name ${JSON.stringify(name)} is not valid: use letters, digits, ".", "_" or "-"`);
  const description = str(doc.description, '"description"', source, false) ?? "";
  if (!Array.isArray(doc.steps) || doc.steps.length === 0)
    throw bad(source, "needs at least one [[steps]] table");
  const steps: WorkflowStep[] = doc.steps.map((raw, i) => parseStep(raw, i, source));
  checkGraph(steps, source);
  return { name, description, steps, source };
}

function parseStep(raw: unknown, i: number, source: string): WorkflowStep {
  const at = `step ${i + 1}`;
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw bad(source, `${at} must be a [[steps]] table`);
  const t = raw as Record<string, unknown>;
  for (const k of Object.keys(t)) {
    if (!STEP_KEYS.has(k))
      throw bad(source, `${at}: unknown key "${k}" (known: ${[...STEP_KEYS].join(", ")})`);
  }
  const id = str(t.id, `${at}: "id"`, source, true)!;
  if (!WORKFLOW_NAME.test(id))
    throw bad(source, `${at}: id ${JSON.stringify(id)} is not valid: use letters, digits, ".", "_" or "-"`);
  const where = `step "${id}"`;
  const bestOf = stepBestOf(t, where, source);
  // A best-of step over a list of agents names its agents there; its first stands for it where one is shown.
  const agent = str(t.agent, `${where}: "agent"`, source, !bestOf?.agents) ?? bestOf!.agents![0]!;
  const prompt = str(t.prompt, `${where}: "prompt"`, source, true)!;
  let needs: string[] = [];
  if (t.needs !== undefined) {
    if (!Array.isArray(t.needs) || t.needs.some((n) => typeof n !== "string"))
      throw bad(source, `${where}: "needs" must be a list of step ids`);
    needs = t.needs as string[];
    const dup = needs.find((n, k) => needs.indexOf(n) !== k);
    if (dup !== undefined) throw bad(source, `${where} lists "${dup}" twice in needs`);
  }
  const model = str(t.model, `${where}: "model"`, source, false);
  const reasoning = str(t.reasoning, `${where}: "reasoning"`, source, false);
  const on = str(t.on, `${where}: "on"`, source, false);
  const container = stepContainer(t.container, where, source);
  if (on !== undefined && container !== undefined)
    throw bad(source, `${where}: give "on" or "container", not both`);
  const restart = str(t.restart, `${where}: "restart"`, source, false);
  if (restart !== undefined && parseRestart(restart) === undefined)
    throw bad(source, `${where}: "restart" must be ${RESTART_RULE}, not ${JSON.stringify(restart)}`);
  const verify = stepVerify(t.verify, where, source);
  const output = t.output === undefined ? undefined : parseOutput(t.output, `workflow ${source}: ${where}`);
  if (bestOf && output !== undefined)
    throw bad(source, `${where}: a best-of step hands on its candidates' answers: no "output"`);
  return {
    id,
    agent,
    prompt,
    needs,
    ...(model !== undefined ? { model } : {}),
    ...(reasoning !== undefined ? { reasoning } : {}),
    ...(on !== undefined ? { on } : {}),
    ...(container !== undefined ? { container } : {}),
    ...(verify !== undefined ? { verify } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(restart !== undefined ? { restart } : {}),
    ...(bestOf ? { bestOf } : {}),
  };
}

/** A step's `best_of`, `agents` and `judge`, checked by the core's one rule of what a best-of run takes. */
function stepBestOf(t: Record<string, unknown>, where: string, source: string): StepBestOf | undefined {
  const judge = str(t.judge, `${where}: "judge"`, source, false);
  if (t.best_of === undefined && t.agents === undefined) {
    if (judge !== undefined) throw bad(source, `${where}: "judge" goes with "best_of" or "agents"`);
    return undefined;
  }
  if (t.best_of !== undefined && typeof t.best_of !== "number")
    throw bad(source, `${where}: "best_of" must be a whole number`);
  if (t.agents !== undefined && (!Array.isArray(t.agents) || t.agents.some((a) => typeof a !== "string")))
    throw bad(source, `${where}: "agents" must be a list of agent names`);
  const out: StepBestOf = {
    ...(t.best_of !== undefined ? { n: t.best_of as number } : {}),
    ...(t.agents !== undefined ? { agents: t.agents as string[] } : {}),
    ...(judge !== undefined ? { judge } : {}),
  };
  const conflict = bestOfConflict({
    ...out,
    ...(typeof t.agent === "string" ? { agent: t.agent } : {}),
  });
  if (conflict) throw bad(source, `${where}: ${BEST_OF_CONFLICT[conflict]}`);
  return out;
}

/**
 * A step's `verify`: a command line, an argv list, or a table of command, retries and timeout (a duration:
 * seconds, or "30s", "5m"). Its values are checked whole at spawn, like a flag's.
 */
function stepVerify(v: unknown, where: string, source: string): VerifyRequest | undefined {
  if (v === undefined) return undefined;
  const command = (c: unknown): c is string | string[] =>
    (typeof c === "string" && c.trim() !== "") ||
    (Array.isArray(c) && c.length > 0 && c.every((w) => typeof w === "string"));
  if (command(v)) return { command: v };
  const shape = `${where}: "verify" must be a command line, an argv list or a table of command, retries, timeout`;
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw bad(source, shape);
  const t = v as Record<string, unknown>;
  for (const k of Object.keys(t))
    if (!["command", "retries", "timeout"].includes(k))
      throw bad(source, `${where}: verify: unknown key "${k}"`);
  if (!command(t.command)) throw bad(source, shape);
  const out: VerifyRequest = { command: t.command };
  if (t.retries !== undefined) {
    if (typeof t.retries !== "number" || !Number.isInteger(t.retries))
      throw bad(source, `${where}: verify.retries must be a whole number`);
    out.retries = t.retries;
  }
  if (t.timeout !== undefined) {
    const ms = durationMs(t.timeout);
    if (ms === undefined) throw bad(source, `${where}: verify.timeout must be a duration (30s, 5m)`);
    out.timeoutMs = ms;
  }
  return out;
}

/** A step's `container`: an image's name, `true` (the default image), or a table (its values checked at spawn). */
function stepContainer(v: unknown, where: string, source: string): ContainerRequest | undefined {
  if (v === undefined) return undefined;
  if (v === true) return {};
  if (typeof v === "string" && v !== "") return { image: v };
  if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as ContainerRequest;
  throw bad(source, `${where}: "container" must be an image's name, true or a table`);
}

/**
 * A step's `output` table; its `schema` is a table or a string of JSON (deep schemas read better as JSON).
 * The schema is compiled here, so a bad one refuses the whole workflow before any child starts.
 */
function parseOutput(raw: unknown, where: string): OutputSpec {
  let spec = raw as Record<string, unknown>;
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    for (const k of Object.keys(raw)) {
      if (k !== "description" && k !== "schema")
        throw new MusterError(
          "invalid_config",
          `${where}: unknown output key "${k}" (known: description, schema)`,
        );
    }
    if (typeof spec.schema === "string") {
      try {
        spec = { ...spec, schema: JSON.parse(spec.schema) };
      } catch (e) {
        throw new MusterError(
          "invalid_config",
          `${where}: output schema is not JSON: ${(e as Error).message}`,
        );
      }
    }
  }
  compileOutput(spec, where);
  return spec as unknown as OutputSpec;
}

/**
 * Checks a definition built in code (the library takes any WorkflowDef) as parseWorkflow checks a file: names
 * (step ids become file names) and the graph.
 */
export function checkWorkflow(def: WorkflowDef): void {
  if (!WORKFLOW_NAME.test(def.name)) throw bad(def.source, `name ${JSON.stringify(def.name)} is not valid`);
  if (def.steps.length === 0) throw bad(def.source, "needs at least one step");
  for (const s of def.steps) {
    if (!WORKFLOW_NAME.test(s.id)) throw bad(def.source, `step id ${JSON.stringify(s.id)} is not valid`);
    if (typeof s.prompt !== "string" || typeof s.agent !== "string" || !Array.isArray(s.needs))
      throw bad(def.source, `step "${s.id}" needs a string agent and prompt and a needs list`);
    if (s.output !== undefined) compileOutput(s.output, `workflow ${def.source}: step "${s.id}"`);
  }
  checkGraph(def.steps, def.source);
}

function checkGraph(steps: WorkflowStep[], source: string): void {
  const byId = new Map<string, WorkflowStep>();
  for (const s of steps) {
    if (byId.has(s.id)) throw bad(source, `duplicate step id "${s.id}"`);
    byId.set(s.id, s);
  }
  const missing = steps.flatMap((s) =>
    s.needs.filter((n) => !byId.has(n)).map((n) => `step "${s.id}" needs "${n}"`),
  );
  if (missing.length > 0)
    throw bad(
      source,
      `${fewOf(missing)}, which ${missing.length === 1 ? "is not a step" : "are not steps"} (steps: ${fewOf([...byId.keys()])})`,
    );
  const cycle = findCycle(steps);
  if (cycle) throw bad(source, `steps form a cycle: ${cycleLine(cycle)}`);
}

/** How many items an error names before it only counts the rest: a huge workflow still gets a one-line error. */
const NAMED = 5;

/** The first few items, comma-separated, then how many more: `a, b, c and 9,997 more`. */
export function fewOf(items: readonly string[], named = NAMED): string {
  if (items.length <= named) return items.join(", ");
  return `${items.slice(0, named).join(", ")} and ${(items.length - named).toLocaleString("en-US")} more`;
}

/** A cycle for an error: whole when short, else its first steps, how many are left out, and the way back. */
function cycleLine(cycle: string[]): string {
  if (cycle.length <= 2 * NAMED) return cycle.join(" → ");
  const inner = cycle.length - 1 - NAMED;
  return `${cycle.slice(0, NAMED).join(" → ")} → … (${inner.toLocaleString("en-US")} more) → ${cycle.at(-1)}`;
}

/**
 * A cycle as step ids, first repeated at the end ("a → b → a"), or undefined; found by DFS in declaration
 * order, with an explicit stack (a cycle of thousands of steps would overflow the call stack).
 */
export function findCycle(steps: WorkflowStep[]): string[] | undefined {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const state = new Map<string, "open" | "done">();
  // The open path, and for each of its steps the index of the next need to look at.
  const path: string[] = [];
  const next: number[] = [];
  const onPath = new Map<string, number>();
  for (const s of steps) {
    if (state.has(s.id)) continue;
    state.set(s.id, "open");
    path.push(s.id);
    next.push(0);
    onPath.set(s.id, 0);
    while (path.length > 0) {
      const top = path.length - 1;
      const needs = byId.get(path[top]!)?.needs ?? [];
      const i = next[top]!;
      if (i >= needs.length) {
        state.set(path[top]!, "done");
        onPath.delete(path[top]!);
        path.pop();
        next.pop();
        continue;
      }
      next[top] = i + 1;
      const n = needs[i]!;
      if (state.get(n) === "open") return [...path.slice(onPath.get(n)), n];
      if (!state.has(n)) {
        state.set(n, "open");
        onPath.set(n, path.length);
        path.push(n);
        next.push(0);
      }
    }
  }
  return undefined;
}

/** Refuses a workflow whose steps name agents that are not known here (the error names each such step). */
export function checkAgents(def: WorkflowDef, known: ReadonlySet<string>): void {
  const uses = def.steps.flatMap((s) =>
    [s.agent, ...(s.bestOf?.agents ?? []), ...(s.bestOf?.judge ? [s.bestOf.judge] : [])].map((agent) => ({
      id: s.id,
      agent,
    })),
  );
  const unknown = uses.filter(
    (u, i) => !known.has(u.agent) && uses.findIndex((v) => v.id === u.id && v.agent === u.agent) === i,
  );
  if (unknown.length === 0) return;
  const list = fewOf(unknown.map((s) => `step "${s.id}" uses "${s.agent}"`));
  throw new MusterError("not_found", `workflow ${def.name} (${def.source}): unknown agent: ${list}`, {
    next: { action: "agents" },
  });
}

/** Steps no other step needs: their results are the workflow's results. */
export function terminalSteps(def: WorkflowDef): WorkflowStep[] {
  const needed = new Set(def.steps.flatMap((s) => s.needs));
  return def.steps.filter((s) => !needed.has(s.id));
}
