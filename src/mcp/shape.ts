import type { TurnResult } from "../core/results.js";
import type { Usage } from "../core/types.js";
import type { ChildView } from "../core/views.js";

/** A settled turn as the MCP tools return it. */
export interface McpResult {
  id: string;
  agent: string;
  turnId: string;
  status: string;
  output?: string;
  error?: string;
  resumable: boolean;
  usage: Usage | null;
  /** A child in a git worktree of its own: branch, commit range, diff stat, writes into the parent's checkout. */
  isolation?: TurnResult["isolation"];
  /** The child's acceptance check on this answer: its last run (output's end as evidence) and the runs it took. */
  verified?: TurnResult["verified"];
}

/** A TurnResult in the tools' shape: the snapshot text as `output`, the reason as `error` when not completed. */
export function shapeResult(r: TurnResult): McpResult {
  const error =
    r.status !== "completed"
      ? (r.reason ?? r.outputError?.message ?? r.status)
      : r.text === undefined
        ? r.outputError?.message
        : undefined;
  return {
    id: r.id,
    agent: r.agent,
    turnId: r.turnId,
    status: r.status,
    ...(r.text !== undefined ? { output: r.text } : {}),
    ...(error !== undefined ? { error } : {}),
    resumable: r.resumable,
    usage: r.usage ?? null,
    ...(r.isolation ? { isolation: r.isolation } : {}),
    ...(r.providerError ? { providerError: r.providerError } : {}),
    ...(r.verified ? { verified: r.verified } : {}),
  };
}

/** One row of the children list. */
export function childRow(v: ChildView) {
  // Its files were refused (a symlink, FIFO or device): nothing but the reason is known.
  if (v.unreadable !== undefined) return { id: v.id, status: v.status, error: v.unreadable };
  return {
    id: v.id,
    ...(v.name !== undefined ? { name: v.name } : {}),
    agent: v.agent,
    status: v.status,
    live: v.live,
    lastOutcome: v.lastOutcome?.status ?? null,
    turns: v.turns.length,
    activity: v.lastActivity?.text ?? null,
  };
}

/** One child in detail: its turns, usage, where to watch it. */
export function childDetail(v: ChildView) {
  return {
    ...childRow(v),
    runner: v.runner,
    createdAt: v.createdAt,
    cwd: v.cwd,
    queuedTurns: v.queuedTurns,
    usage: v.usage,
    resumable: v.resumable,
    attach: v.attach,
    artifactDir: v.artifactDir,
    turnList: v.turns.map((t) => ({
      turnId: t.turnId,
      status: t.status,
      ...(t.durationMs !== undefined ? { durationMs: t.durationMs } : {}),
      ...(t.reason ? { reason: t.reason } : {}),
    })),
  };
}

/** A description cut to one short line: no parentheticals, its first sentence, at most `max` characters. */
export function oneLine(text: string, max = 60): string {
  const flat = text
    .replace(/\s*\([^()]*\)/g, "")
    .replace(/\s+/g, " ")
    .trim();
  const sentence = (/^(.+?[.!?])(?:\s|$)/.exec(flat)?.[1] ?? flat).replace(/\.$/, "");
  return sentence.length <= max ? sentence : `${sentence.slice(0, max - 1).trimEnd()}…`;
}

/**
 * Longest the agent list inside the `agent` parameter's description may grow (the rest is counted): with it
 * at this bound the whole tools/list stays under 6,000 characters (about 1,500 tokens), with room for caps
 * and subagents_answer.
 */
export const AGENT_LIST_BUDGET = 700;

const more = (n: number): string => `+${n} more (the subagents_agents tool lists all)`;

/** The `agent` parameter's description: one `name: one line` per profile, bounded; the overflow is counted. */
export function agentsLine(found: { profiles: readonly { name: string; description: string }[] }): string {
  const lines = ["Profile for a new child:"];
  let used = lines[0]!.length;
  for (const [i, p] of found.profiles.entries()) {
    const line = p.description ? `${p.name}: ${oneLine(p.description, 40)}` : p.name;
    const left = found.profiles.length - i - 1;
    if (used + line.length + 1 + (left > 0 ? more(left).length + 1 : 0) > AGENT_LIST_BUDGET) {
      lines.push(more(left + 1));
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.length > 1 ? lines.join("\n") : "Profile for a new child (none found).";
}
