import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { MusterError } from "../../base/errors.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { uuidv7 } from "../../util/ids.js";
import type { WorkflowHost } from "../host.js";
import { type CodeDef, processStart, RunLog, runFiles } from "../run-log.js";
import { executeCode } from "./code-exec.js";
import type { CodeRunOptions, CodeRunResult, WorkflowFn } from "./code-types.js";

export type {
  AgentCall,
  AgentHandle,
  AgentResult,
  CodeProgress,
  CodeRunOptions,
  CodeRunResult,
  WorkflowContext,
  WorkflowFn,
} from "./code-types.js";

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
    // The file's mtime in the URL: a long-lived process (the MCP server) imports an edited module afresh.
    const url = pathToFileURL(path.resolve(file));
    url.search = `mtime=${fs.statSync(url).mtimeMs}`;
    mod = (await import(url.href)) as { default?: unknown };
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
  const o = opts.origin;
  const def: CodeDef = {
    name,
    description: "",
    steps: [],
    source: o?.kind === "code" ? o.file : (o?.file ?? name),
    kind: o?.kind ?? "code",
    file: o?.kind === "code",
  };
  const log = RunLog.create(files, def, input);
  if (o?.kind === "sandbox") writeFileAtomic(path.join(files.dir, "program.js"), o.program);
  const pidStart = processStart(process.pid);
  log.append({
    type: "run_started",
    runId,
    workflow: name,
    source: def.source,
    pid: process.pid,
    ...(pidStart ? { pidStart } : {}),
    steps: [],
  });
  opts.onProgress?.({ type: "run_started", runId, dir: files.dir });
  return executeCode(host, { runId, name, files, log }, fn, input, opts);
}
