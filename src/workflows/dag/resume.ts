import * as fs from "node:fs";
import { readAllRecords } from "../../artifacts/reader.js";
import { MusterError } from "../../base/errors.js";
import { readJson } from "../../util/fsx.js";
import type { WorkflowHost } from "../host.js";
import { assertResumable, processStart, type RunEvent, RunLog, runFiles, runKind } from "../run-log.js";
import { execute, type Prior, type RunOptions, type RunResult } from "./run.js";
import { checkAgents, checkWorkflow, type WorkflowDef } from "./toml.js";

/**
 * Resumes a TOML workflow run that is not running (its runner was killed, or it was cancelled or failed): the
 * same run id, definition and input. Completed steps keep their results and are not re-run; a step whose
 * child may still be running is waited for (and started again only if that child does not complete); every
 * other step runs again.
 */
export async function resumeWorkflow(
  host: WorkflowHost,
  runId: string,
  opts: RunOptions = {},
): Promise<RunResult> {
  const stateDir = host.stateDir();
  assertResumable(stateDir, runId);
  const files = runFiles(stateDir, runId);
  if (runKind(stateDir, runId) !== "toml")
    throw new MusterError("unsupported", `workflow run ${runId} is not a TOML workflow run`);
  const def = readJson<WorkflowDef>(files.workflow);
  checkWorkflow(def);
  checkAgents(def, host.agents());
  const input = fs.readFileSync(files.input, "utf8");

  const prior: Prior = { completed: new Map(), attach: new Map() };
  const started = new Map<string, { childId: string; turnId: string; candidates?: string[] }>();
  for (const e of readAllRecords<RunEvent>(files.events)) {
    if (e.type === "step_started")
      started.set(e.stepId, {
        childId: e.childId,
        turnId: e.turnId,
        ...(e.candidates ? { candidates: e.candidates } : {}),
      });
    // A step continued after a pause: its child's newest turn is the one to wait for.
    else if (e.type === "step_continued") started.set(e.stepId, { childId: e.childId, turnId: e.turnId });
    else if (e.type === "step_settled") started.delete(e.stepId);
    else if (e.type === "run_resumed") for (const id of e.rerun) prior.completed.delete(id);
    if (e.type === "step_settled" && e.status === "completed") {
      const step = def.steps.find((s) => s.id === e.stepId);
      const text = e.output ? fs.readFileSync(files.output(e.stepId), "utf8") : "";
      if (step)
        prior.completed.set(e.stepId, {
          id: e.stepId,
          agent: step.agent,
          status: "completed",
          ...(e.childId ? { childId: e.childId } : {}),
          text,
          // A structured step's recorded output is its decoded value, as JSON.
          ...(step.output ? { output: parseRecorded(text) } : {}),
        });
    }
  }
  for (const [id, c] of started) if (!prior.completed.has(id)) prior.attach.set(id, c);

  fs.rmSync(files.cancel, { force: true });
  const log = RunLog.open(files);
  const pidStart = processStart(process.pid);
  log.append({
    type: "run_resumed",
    pid: process.pid,
    ...(pidStart ? { pidStart } : {}),
    rerun: def.steps.filter((s) => !prior.completed.has(s.id)).map((s) => s.id),
  });
  opts.onProgress?.({ type: "run_started", runId, dir: files.dir });
  return execute(host, def, input, runId, log, prior, opts);
}

function parseRecorded(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
