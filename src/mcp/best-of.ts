/**
 * Best-of-N through MCP: `subagents_run {bestOf, agents}` starts N candidates on the task, each in a worktree
 * of its own, and (unless `await` is false) returns every candidate's result in run order; `subagents_compare`
 * shows them side by side, or has a judge agent pick one.
 */
import { MusterError } from "../base/errors.js";
import { BEST_OF_CONFLICT, type BestOfRequest, bestOfConflict } from "../core/best-of.js";
import type { MusterEvent } from "../core/types.js";
import { shortId } from "../util/ids.js";
import type { CallContext } from "./call-context.js";
import { shapeResult } from "./shape.js";

/** The arguments of subagents_run a best-of run reads (the rest are handed over as a BestOfRequest). */
export interface BestOfArgs {
  bestOf?: number;
  agents?: string[];
  agent?: string;
  id?: string;
  groupId?: string;
  name?: string;
  fork?: string;
  isolation?: string;
  await?: boolean;
}

/** Whether a subagents_run call asks for a best-of run. */
export const asksBestOf = (a: BestOfArgs): boolean => a.bestOf !== undefined || a.agents !== undefined;

/** subagents_run with bestOf/agents: the candidates, then (await) their results in run order. */
export async function runBestOf(
  a: BestOfArgs,
  req: Omit<BestOfRequest, "n" | "agents" | "agent">,
  ctx: CallContext,
): Promise<Record<string, unknown>> {
  const conflict = bestOfConflict({
    ...(a.bestOf !== undefined ? { n: a.bestOf } : {}),
    ...(a.agents !== undefined ? { agents: a.agents } : {}),
    ...(a.agent !== undefined ? { agent: a.agent } : {}),
    ...(a.id !== undefined ? { resume: a.id } : {}),
    ...(a.groupId !== undefined ? { group: a.groupId } : {}),
    ...(a.name !== undefined ? { name: a.name } : {}),
    ...(a.fork !== undefined ? { fork: a.fork } : {}),
    ...(a.isolation !== undefined ? { isolation: a.isolation } : {}),
  });
  if (conflict) throw new MusterError("invalid_argument", BEST_OF_CONFLICT[conflict]);
  const started = await ctx.m.bestOf({
    ...req,
    ...(a.bestOf !== undefined ? { n: a.bestOf } : {}),
    ...(a.agents !== undefined ? { agents: a.agents } : {}),
    ...(a.agent !== undefined ? { agent: a.agent } : {}),
  });
  const head = {
    group: started.group,
    children: started.children,
    ...(started.warnings.length > 0 ? { warnings: started.warnings } : {}),
  };
  if (a.await === false) return head;
  ctx.progress.say(`${started.children.length} candidates started (group ${started.group})`);
  const outcome = await ctx.m.waitBestOf(started.group, {
    withText: true,
    signal: ctx.signal,
    onEvent: (id: string, e: MusterEvent) => ctx.progress.event(id, e),
  });
  return {
    ...head,
    results: outcome.results.map(shapeResult),
    ...(outcome.pending.length > 0 ? { pending: outcome.pending.map((id) => shortId(id)) } : {}),
  };
}

/**
 * subagents_compare: the candidates side by side; with `judge`, that agent picks one and its verdict is kept
 * (`recorded: false` and the reason when it named none).
 */
export async function compare(a: { group: string; judge?: string }, ctx: CallContext) {
  if (a.judge === undefined) return ctx.m.compare(a.group);
  return ctx.m.judge(a.group, a.judge, {
    signal: ctx.signal,
    onJudge: (id) => ctx.progress.say(`judge ${shortId(id)} started`),
  });
}
