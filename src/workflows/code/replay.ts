import { createHash } from "node:crypto";
import * as path from "node:path";
import { readAllRecords } from "../../artifacts/reader.js";
import { readJsonIfExists } from "../../util/fsx.js";
import type { RunEvent, RunFiles } from "../run-log.js";
import type { AgentCall, AgentResult } from "./code-types.js";

/**
 * What a code workflow's resume answers from its log: the calls that completed, by step id (`agent-<n>`, n the
 * call's order), each with the key of the arguments it was made with; and the children left running when the
 * runner stopped.
 */
export interface ReplayLog {
  calls: Map<string, { key: string; result: AgentResult }>;
  /** Calls started and never settled (their runner was killed): step id → child id. */
  orphans: Map<string, string>;
  /** Calls that settled without completing: they run again. */
  failed: string[];
}

/** The call's place: n of `agent-<n>`. */
export const callIndex = (stepId: string): number => Number(stepId.slice("agent-".length));

/**
 * The key of a ctx.agent call: a hash of every argument that shapes the child (agent, prompt, model,
 * reasoning, cwd, output), in a fixed order with object keys sorted, so the same call gives the same key.
 */
export function callKey(call: AgentCall): string {
  const c = (call ?? {}) as Partial<AgentCall>;
  const fields = [c.agent, c.prompt, c.model, c.reasoning, c.cwd, c.output].map((v) => v ?? null);
  return createHash("sha256").update(stable(fields)).digest("hex").slice(0, 32);
}

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v) ?? "null";
}

/** The file holding a settled call's whole result (what the function got), written before its step_settled. */
export const callFile = (files: RunFiles, stepId: string): string =>
  path.join(files.dir, "calls", `${stepId}.json`);

/**
 * Folds a code run's log into what replay may answer. A `replay_ended` at call n drops every record of call n
 * and later from earlier attempts: from there the run took (or may have taken) another path.
 */
export function readReplay(files: RunFiles): ReplayLog {
  const out: ReplayLog = { calls: new Map(), orphans: new Map(), failed: [] };
  const failed = new Set<string>();
  for (const e of readAllRecords<RunEvent>(files.events)) {
    if (e.type === "step_started") out.orphans.set(e.stepId, e.childId);
    else if (e.type === "step_settled") {
      out.orphans.delete(e.stepId);
      out.calls.delete(e.stepId);
      failed.delete(e.stepId);
      const result =
        e.status === "completed" && e.key
          ? readJsonIfExists<AgentResult>(callFile(files, e.stepId))
          : undefined;
      if (result && e.key) out.calls.set(e.stepId, { key: e.key, result });
      else failed.add(e.stepId);
    } else if (e.type === "replay_ended") {
      const from = callIndex(e.stepId);
      for (const id of [...out.calls.keys()]) if (callIndex(id) >= from) out.calls.delete(id);
    }
  }
  out.failed = [...failed];
  return out;
}
