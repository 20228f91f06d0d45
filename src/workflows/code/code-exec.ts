import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { ensureDir, writeJsonAtomic } from "../../util/fsx.js";
import type { StepOutcome, StepSpawn, WorkflowHost } from "../host.js";
import { MAX_CONTINUES, pausedRecord, pausing, untilUnpaused } from "../pause.js";
import { type RunFiles, type RunLog, stepSettled } from "../run-log.js";
import { compileOutput, finishStructured, modeOf, outcomeFields, structuredSpawn } from "../structured.js";
import type {
  AgentCall,
  AgentResult,
  CodeRunOptions,
  CodeRunResult,
  WorkflowContext,
  WorkflowFn,
} from "./code-types.js";
import { awaitHandles, parallel, pipeline } from "./ctx-flow.js";
import { callFile, callKey, type ReplayLog } from "./replay.js";

/** A phase's name as recorded: one line in a log and a status table (control characters become spaces). */
export function phaseName(name: unknown): string {
  const n = String(name)
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, " ")
    .trim()
    .slice(0, 200);
  if (n === "") throw new MusterError("invalid_argument", "ctx.phase needs a name");
  return n;
}

/** A run whose directory and first records exist: new (runCodeWorkflow) or resumed (resumeCode). */
export interface CodeRun {
  runId: string;
  name: string;
  files: RunFiles;
  log: RunLog;
}

/**
 * Runs the function of a code run. With `replay` (a resume), calls are answered from the log while each one
 * matches the logged call of the same order (same argument key, completed); the first that does not ends
 * replay for good (`replay_ended`), and from there every call starts a real child.
 */
export async function executeCode(
  host: WorkflowHost,
  run: CodeRun,
  fn: WorkflowFn,
  input: string,
  opts: CodeRunOptions,
  replay?: ReplayLog,
): Promise<CodeRunResult> {
  const { runId, name, files, log } = run;
  const max = opts.maxAgents ?? 256;
  const controller = new AbortController();
  const running = new Map<string, string>();
  const results: AgentResult[] = [];
  let calls = 0;
  // Spawns not returned yet, and whether the function threw (what starts after that is cancelled at once).
  let starting = 0;
  let abandoned = false;
  let replaying = replay !== undefined;
  let replayed = 0;
  let phase: string | undefined;
  // Children closed once their call settled (host.release): the run ends after they are.
  const releasing: Promise<void>[] = [];

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

  const settle = (r: AgentResult, key: string): AgentResult => {
    results.push(r);
    // A structured worker's recorded output is its decoded value, not the prose around it.
    const text = "output" in r ? JSON.stringify(r.output, null, 2) : (r.text ?? "");
    const output = r.status === "completed" ? log.writeOutput(r.id, text) : undefined;
    // The whole result, for a resume to hand back to the function exactly (written before the record).
    if (r.status === "completed") {
      ensureDir(path.dirname(callFile(files, r.id)));
      writeJsonAtomic(callFile(files, r.id), r);
    }
    log.append(stepSettled(r, { ...(output ? { output } : {}), key }));
    opts.onProgress?.({ type: "agent_settled", result: r });
    return r;
  };

  const start = async (
    id: string,
    call: AgentCall,
    key: string,
    validate?: ReturnType<typeof compileOutput>,
  ): Promise<AgentResult> => {
    const base = { id, agent: String(call?.agent) };
    if (controller.signal.aborted)
      return settle({ ...base, status: "cancelled", reason: "the run was cancelled" }, key);
    if (calls > max)
      return settle(
        { ...base, status: "errored", reason: `the run's cap of ${max} children is reached` },
        key,
      );
    let child: { id: string; turnId: string };
    const plain: StepSpawn = {
      agent: call.agent,
      prompt: call.prompt,
      ...(call.model ? { model: call.model } : {}),
      ...(call.reasoning ? { reasoning: call.reasoning } : {}),
      ...(call.cwd ? { cwd: call.cwd } : {}),
      ...(call.on ? { on: call.on } : {}),
      ...(call.container ? { container: call.container } : {}),
      ...(call.verify ? { verify: call.verify } : {}),
    };
    const spawn = validate && call.output ? structuredSpawn(host, plain, call.output) : plain;
    starting += 1;
    try {
      child = await host.spawn(spawn);
    } catch (e) {
      return settle({ ...base, status: "errored", reason: `could not start: ${(e as Error).message}` }, key);
    } finally {
      starting -= 1;
    }
    running.set(id, child.id);
    log.append({
      type: "step_started",
      stepId: id,
      childId: child.id,
      turnId: child.turnId,
      agent: call.agent,
      key,
      ...(phase !== undefined ? { phase } : {}),
    });
    opts.onProgress?.({ type: "agent_started", id, childId: child.id, agent: call.agent });
    // A cancel, or a function that threw, while this child was being started: it must not run on unowned.
    if (controller.signal.aborted || abandoned) await host.cancel([child.id]).catch(() => {});
    const structured = !!(validate && call.output);
    let out = structured
      ? await finishStructured(
          host,
          child,
          call.output!,
          validate!,
          (turnId) => log.append({ type: "step_retried", stepId: id, turnId }),
          modeOf(spawn),
        )
      : await host.wait(child.id, child.turnId);
    // A quota or a refused credential holds the call with its tree; once the pause lifts the same child gets
    // the prompt again (its conversation kept), as a TOML step does.
    const stopped = () => controller.signal.aborted || abandoned;
    for (let n = 0; !structured && pausing(out as StepOutcome) && !stopped() && n < MAX_CONTINUES; n++) {
      log.append(pausedRecord(id, child.id, out as StepOutcome));
      await untilUnpaused(host, stopped);
      if (stopped()) break;
      const sent = await host.send(child.id, call.prompt).catch(() => undefined);
      if (!sent) break;
      log.append({ type: "step_continued", stepId: id, childId: child.id, turnId: sent.turnId });
      out = await host.wait(child.id, sent.turnId);
    }
    running.delete(id);
    const settled = settle({ ...base, childId: child.id, ...outcomeFields(out) }, key);
    // A structured worker's child was closed by finishStructured already.
    if (!structured && host.release) releasing.push(host.release(child.id));
    return settled;
  };

  /** The logged result of this call, while replay lasts; the first call it cannot answer ends it. */
  const fromLog = (id: string, key: string): AgentResult | undefined => {
    if (!replaying || !replay) return undefined;
    const logged = replay.calls.get(id);
    if (logged && logged.key === key) {
      replayed += 1;
      return logged.result;
    }
    replaying = false;
    const reason = logged ? "its arguments differ from the logged call's" : `the log has no completed ${id}`;
    log.append({ type: "replay_ended", stepId: id, replayed, reason });
    opts.onProgress?.({ type: "replay_ended", id, replayed, reason });
    return undefined;
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
      const key = callKey(call);
      const logged = fromLog(id, key);
      if (logged) {
        results.push(logged);
        opts.onProgress?.({ type: "agent_replayed", result: logged });
        const p = Promise.resolve(logged);
        return { id, await: () => p };
      }
      const p = start(id, call, key, validate);
      return { id, await: () => p };
    },
    await: awaitHandles as WorkflowContext["await"],
    parallel,
    pipeline: (items, ...stages) => pipeline(items, stages),
    phase(name) {
      const n = phaseName(name);
      phase = n;
      log.append({ type: "phase", name: n });
      opts.onProgress?.({ type: "phase", name: n });
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
    abandoned = true;
    await host.cancel([...running.values()]).catch(() => {});
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
  }
  // Children the function started but never awaited still belong to the run: it ends when they have settled.
  while (running.size > 0 || starting > 0) await new Promise((r) => setTimeout(r, 100));
  await Promise.all(releasing);
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
    steps: [...results].sort((a, b) => Number(a.id.slice(6)) - Number(b.id.slice(6))),
  };
}
