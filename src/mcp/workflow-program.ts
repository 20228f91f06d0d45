import { MusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import { shortId } from "../util/ids.js";
import type { AgentResult, CodeRunOptions, CodeRunResult } from "../workflows/code.js";
import type { HostOptions } from "../workflows/host.js";

/** A program is short: the same bound as `muster workflow run --sandbox` puts on its file. */
const MAX_SOURCE_BYTES = 1024 * 1024;

type CodeProgress = Parameters<NonNullable<CodeRunOptions["onProgress"]>>[0];

/** One progress line per program event: a ctx.agent child starting or settling, a ctx.log line. */
function progressLine(p: CodeProgress): string | undefined {
  if (p.type === "agent_started") return `step ${p.id} started: child ${shortId(p.childId)} (${p.agent})`;
  if (p.type === "agent_settled") {
    const r = p.result;
    return `step ${r.id} ${r.status}${r.reason ? `: ${r.reason}` : ""}`;
  }
  if (p.type === "log") return `log: ${p.text}`;
  return undefined;
}

/** A ctx.agent call in the tool's answer: its child and, when it did not complete, why. */
function shapeAgent(a: AgentResult) {
  return {
    id: a.id,
    agent: a.agent,
    status: a.status,
    ...(a.childId ? { childId: a.childId } : {}),
    ...(a.status !== "completed" ? { error: a.reason ?? a.status } : {}),
    ...(a.structured ? { structured: a.structured } : {}),
    ...(a.errors ? { errors: a.errors } : {}),
  };
}

/** A settled program run: what it returned (or why it failed), and its ctx.agent calls as steps, in call order. */
export function shapeProgramRun(r: CodeRunResult) {
  return {
    runId: r.runId,
    workflow: r.workflow,
    status: r.status,
    ...(r.result !== undefined ? { result: r.result } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    steps: r.steps.map(shapeAgent),
  };
}

/**
 * How a model-written program (`subagents_workflow {source}`) runs, for WorkflowRuns.track: in the QuickJS
 * sandbox (workflows/sandbox.ts), untrusted text, never imported; every ctx.agent call is a real child and the
 * run is recorded like a code workflow's. A program that fails (a throw, a limit) settles `failed`.
 */
export async function beginProgram(m: Muster, source: string, input: string, host: HostOptions = {}) {
  if (source.trim() === "")
    throw new MusterError("invalid_argument", "source is empty: give the program's text");
  if (Buffer.byteLength(source) > MAX_SOURCE_BYTES)
    throw new MusterError("invalid_argument", "source is larger than 1 MiB: a program here is a short one");
  const [{ runSandboxed }, { musterHost }] = await Promise.all([
    import("../workflows/sandbox.js"),
    import("../workflows/host.js"),
  ]);
  return async (signal: AbortSignal, say: (line: string) => void, started: (runId: string) => void) => {
    const r = await runSandboxed(source, input, musterHost(m, host), {
      signal,
      onProgress: (p) => {
        if (p.type === "run_started") started(p.runId);
        const line = progressLine(p);
        if (line !== undefined) say(line);
      },
    });
    return { runId: r.runId, answer: shapeProgramRun(r) };
  };
}
