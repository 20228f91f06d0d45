import type { Muster } from "../core/muster.js";
import { shortId } from "../util/ids.js";
import type { CodeProgress, CodeRunResult } from "../workflows/code.js";
import type { HostOptions } from "../workflows/host.js";
import type { WorkflowDef } from "../workflows/toml.js";

/** One progress line per call of a code run. */
function progressLine(p: CodeProgress): string {
  if (p.type === "agent_started") return `${p.id} started: child ${shortId(p.childId)} (${p.agent})`;
  if (p.type === "agent_settled" || p.type === "agent_replayed")
    return `${p.result.id} ${p.result.status}${p.result.reason ? `: ${p.result.reason}` : ""}`;
  if (p.type === "replay_ended") return `replay ended at ${p.id}`;
  if (p.type === "phase") return `phase ${p.name}`;
  if (p.type === "run_started") return `workflow run ${shortId(p.runId)} started`;
  return p.text;
}

/** A settled code run as the tool answers it: the function's value, and every ctx.agent call. */
function shape(r: CodeRunResult) {
  return {
    runId: r.runId,
    workflow: r.workflow,
    status: r.status,
    ...(r.result !== undefined ? { result: r.result } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    steps: r.steps.map((a) => ({
      id: a.id,
      agent: a.agent,
      status: a.status,
      ...(a.childId ? { childId: a.childId } : {}),
      ...(a.status !== "completed" ? { error: a.reason ?? a.status } : {}),
    })),
  };
}

/**
 * subagents_workflow {name} of a discovered code workflow (trusted: a module in a workflow folder, imported
 * here), as a run the server tracks like the others: followed with progress per ctx.agent call, or (await:
 * false) its runId at once; cancelling a waiting call cancels the run.
 */
export async function beginCode(m: Muster, def: WorkflowDef, input: string, host: HostOptions = {}) {
  const { runCodeWorkflow } = await import("../workflows/code.js");
  const { loadInWorker } = await import("../workflows/code-worker.js");
  const { musterHost } = await import("../workflows/host.js");
  // In a thread of its own: a busy or exiting function cannot stop the server (see code-worker.ts).
  const worker = await loadInWorker(def.source);
  return async (signal: AbortSignal, say: (line: string) => void, started: (runId: string) => void) => {
    const run = await runCodeWorkflow(musterHost(m, host), def.name, worker.fn, input, {
      signal,
      origin: { kind: "code", file: def.source },
      onProgress: (p) => {
        if (p.type === "run_started") started(p.runId);
        else if (p.type !== "log" || p.text.trim() !== "") say(progressLine(p));
      },
    }).finally(() => worker.stop());
    return { runId: run.runId, answer: shape(run) };
  };
}
