import { shortId } from "../../util/ids.js";
import type { RunView, WorkflowProgress, WorkflowResult } from "../../workflows/api.js";
import { EXIT } from "../exit-codes.js";
import { since, table } from "../format.js";
import { ExitWith, printAnswer, printAnswerBlock, printJson, say, warn } from "../output.js";
import { visibleLine } from "../sanitize.js";
import { displayPath } from "./agents.js";

/** One stderr line per run event: a TOML run's steps, a code run's calls, phases and log lines. */
function progressLine(p: WorkflowProgress): string | undefined {
  switch (p.type) {
    case "run_started":
      return `workflow run ${shortId(p.runId)} started (${p.dir})`;
    case "step_started":
      return `step ${p.stepId} started: child ${shortId(p.childId)} (${p.agent})`;
    case "step_paused":
      return `step ${p.stepId} paused with the tree (child ${shortId(p.childId)}): ${visibleLine(p.reason)}; muster resume-tree continues it`;
    case "step_settled": {
      const s = p.step;
      const why = s.reason ? `: ${visibleLine(s.reason)}` : "";
      return `step ${s.id} ${s.status}${s.childId ? ` (child ${shortId(s.childId)})` : ""}${why}`;
    }
    case "agent_started":
      return `${p.id} started: child ${shortId(p.childId)} (${p.agent})`;
    case "agent_settled":
      return `${p.result.id} ${p.result.status}${p.result.reason ? `: ${visibleLine(p.result.reason)}` : ""}`;
    case "agent_replayed":
      return `${p.result.id} ${p.result.status} (from the log${p.result.childId ? `: child ${shortId(p.result.childId)}` : ""})`;
    case "replay_ended":
      return `replay ended at ${p.id} after ${p.replayed} call(s): ${p.reason}; children run from here`;
    case "phase":
      return `phase ${visibleLine(p.name)}`;
    case "log":
      return visibleLine(p.text);
  }
}

export const onProgress = (p: WorkflowProgress): void => {
  const line = progressLine(p);
  if (line !== undefined) warn(`muster: ${line}\n`);
};

/** Exit code of a finished run: 0 completed (every step, for TOML), 3 cancelled, 130 interrupted by Ctrl-C, else 1. */
function runExit(r: WorkflowResult, interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  if (r.status === "completed") return EXIT.ok;
  if (r.status === "cancelled") return EXIT.cancelled;
  return EXIT.errored;
}

/**
 * Prints a finished run and ends with its exit code. `--json`: the run as the facade gives it. Otherwise a TOML
 * run's terminal results, or a code run's returned value, on stdout, and a summary on stderr.
 */
export function report(run: WorkflowResult, json: boolean, interrupted: boolean): void {
  if (json) printJson(run);
  else if (run.kind === "toml") {
    for (const r of run.results ?? []) {
      say(`── ${r.id} · ${r.agent} · ${r.status}${r.reason ? ` · ${visibleLine(r.reason)}` : ""}\n`);
      // A structured step's result is its decoded value, not the prose around it.
      if ("output" in r) printAnswer(`${JSON.stringify(r.output, null, 2)}\n`);
      else if (r.text !== undefined) printAnswerBlock(r.text, true);
      for (const e of r.errors ?? []) say(`   ${visibleLine(e)}\n`);
    }
    const counts = new Map<string, number>();
    for (const s of run.steps) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
    warn(
      `muster: workflow run ${shortId(run.runId)} ${run.status}: ${[...counts].map(([k, n]) => `${n} ${k}`).join(", ")}\n`,
    );
  } else {
    if (typeof run.result === "string")
      printAnswer(run.result.endsWith("\n") ? run.result : `${run.result}\n`);
    else if (run.result !== undefined) say(`${JSON.stringify(run.result, null, 2)}\n`);
    warn(
      `muster: workflow run ${shortId(run.runId)} ${run.status}${run.error ? `: ${visibleLine(run.error)}` : ""}\n`,
    );
  }
  const code = runExit(run, interrupted);
  if (code !== 0) throw new ExitWith(code);
}

/** `workflow status` and `cancel`: the run, then its steps. */
export function printRunView(v: RunView): void {
  say(
    `${table([
      ["run", v.runId],
      ["workflow", `${v.workflow} (${displayPath(v.source)})`],
      ["status", v.status],
      ...(v.phase !== undefined ? [["phase", visibleLine(v.phase)]] : []),
      ["started", `${since(v.startedAt)} ago`],
    ])}\n\n`,
  );
  const rows = [["STEP", "STATUS", "CHILD", "DETAIL"]];
  for (const s of v.steps) {
    const detail = [
      ...(s.structured ? [`structured (${s.structured})`] : []),
      ...(s.reason ? [visibleLine(s.reason)] : []),
      ...(s.errors ? [`schema: ${visibleLine(s.errors.join("; "))}`] : []),
    ].join(" · ");
    rows.push([s.id, s.status, s.childId ? shortId(s.childId) : "-", detail]);
  }
  say(`${table(rows)}\n`);
}
