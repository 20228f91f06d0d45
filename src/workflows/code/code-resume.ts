import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { readJson } from "../../util/fsx.js";
import type { WorkflowHost } from "../host.js";
import { assertResumable, type CodeDef, processStart, RunLog, runFiles, runKind } from "../run-log.js";
import { sandboxFn } from "../sandbox/sandbox.js";
import { loadCodeWorkflow } from "./code.js";
import { executeCode } from "./code-exec.js";
import type { CodeRunOptions, CodeRunResult, WorkflowFn } from "./code-types.js";
import { readReplay } from "./replay.js";

/**
 * Resumes a code workflow run (or a sandboxed program's) that is not running, under the same run id: the
 * function runs again from the start, and its ctx.agent calls are answered from the log while they match the
 * logged calls (order and argument key; see code-exec.ts). Children left running by a killed runner are
 * cancelled: their calls run again. `fn` is needed only for a run whose function was handed to the library.
 */
export async function resumeCodeWorkflow(
  host: WorkflowHost,
  runId: string,
  opts: CodeRunOptions & { fn?: WorkflowFn } = {},
): Promise<CodeRunResult> {
  const stateDir = host.stateDir();
  assertResumable(stateDir, runId);
  const kind = runKind(stateDir, runId);
  if (kind === "toml") throw new MusterError("unsupported", `workflow run ${runId} is a TOML workflow run`);
  const files = runFiles(stateDir, runId);
  const def = readJson<CodeDef>(files.workflow);
  const { fn: given, ...rest } = opts;
  let fn: WorkflowFn;
  let maxAgents = opts.maxAgents;
  if (given) fn = given;
  else if (kind === "sandbox") {
    fn = sandboxFn(fs.readFileSync(path.join(files.dir, "program.js"), "utf8"));
    // The sandbox's cap stays the backstop it was (see runSandboxed).
    maxAgents ??= 32;
  } else if (def.file) fn = await loadCodeWorkflow(def.source);
  else
    throw new MusterError(
      "invalid_argument",
      `workflow run ${runId} ran a function handed to the library; resume it with resumeCodeWorkflow(host, runId, {fn})`,
    );
  const input = fs.readFileSync(files.input, "utf8");

  const replay = readReplay(files);
  const log = RunLog.open(files);
  // A killed runner's children may still run: their results cannot reach this run, so they stop here.
  await host.cancel([...replay.orphans.values()]).catch(() => {});
  for (const [stepId, childId] of replay.orphans)
    log.append({
      type: "step_settled",
      stepId,
      status: "cancelled",
      childId,
      reason: "its runner stopped; the call runs again on resume",
    });
  fs.rmSync(files.cancel, { force: true });
  const pidStart = processStart(process.pid);
  log.append({
    type: "run_resumed",
    pid: process.pid,
    ...(pidStart ? { pidStart } : {}),
    rerun: [...new Set([...replay.orphans.keys(), ...replay.failed])],
  });
  return executeCode(
    host,
    { runId, name: def.name, files, log },
    fn,
    input,
    { ...rest, ...(maxAgents !== undefined ? { maxAgents } : {}) },
    replay,
  );
}
