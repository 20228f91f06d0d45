/**
 * Best-of-N: N children on the same task, each in a git worktree of its own, together in an explicit completion
 * group of their own (delivered once, whole). The run's record (best-of-record.ts) lets `compare` and a judge
 * look at the candidates side by side later, in another process.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { dropGroup, removeGroupMember, sealGroup } from "../delivery/groups.js";
import { readIsolation } from "../isolation/worktree.js";
import { shortId, uuidv7 } from "../util/ids.js";
import { type BestOfChild, type BestOfRecord, hasBestOf, readBestOf, writeBestOf } from "./best-of-record.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { childNamed, isChildName } from "./names.js";
import { removeChildren } from "./remove.js";
import type { SpawnOptions, SpawnResult } from "./spawn.js";
import { type WaitOptions, type WaitOutcome, waitForGroup } from "./wait.js";

export const BEST_OF_MIN = 2;
export const BEST_OF_MAX = 8;

export interface BestOfRequest
  extends Omit<SpawnOptions, "agent" | "group" | "seal" | "name" | "fork" | "isolation" | "outputSchema"> {
  /** How many candidates (2..8); default: one per entry of `agents`. */
  n?: number;
  /** The candidates' agents, taken in turn (a, b, c, a, …); default: `agent` for every one. */
  agents?: string[];
  agent?: string;
  /** Only "worktree", which is also the default: each candidate works apart from the others. */
  isolation?: string;
}

/** What cannot go with a best-of run, as data: each front end says it in its own words (its flags). */
export type BestOfConflict =
  /** N outside 2..8, or not a whole number */
  | "count"
  /** neither N nor a list of agents */
  | "no_count"
  /** one agent for all and a list of agents */
  | "agent_and_agents"
  /** an empty name in the list of agents */
  | "empty_agent"
  /** another isolation than a worktree of its own */
  | "isolation"
  /** the run makes its own group */
  | "group"
  /** the candidates get names of their own */
  | "name"
  /** a best-of run starts from the task alone */
  | "fork"
  /** a best-of run makes new children */
  | "resume";

/** The words the core uses for a conflict (the library's; the CLI names its flags instead). */
export const BEST_OF_CONFLICT: Record<BestOfConflict, string> = {
  count: `best-of: the number of candidates must be a whole number from ${BEST_OF_MIN} to ${BEST_OF_MAX}`,
  no_count: "best-of: give the number of candidates, or a list of agents",
  agent_and_agents: "best-of: give one agent for all the candidates, or a list of agents, not both",
  empty_agent: "best-of: the list of agents has an empty name",
  isolation: "best-of: every candidate works in a git worktree of its own; no other isolation",
  group: "best-of: the run makes a completion group of its own; no group",
  name: "best-of: the candidates are named after the run's group; no name",
  fork: "best-of: the candidates start from the task alone; no fork",
  resume: "best-of: the candidates are new children; no resume",
};

/** The one rule of what a best-of run takes, for every front end: the first conflict found, or undefined. */
export function bestOfConflict(req: {
  n?: number;
  agents?: string[];
  agent?: string;
  isolation?: string;
  group?: string;
  seal?: boolean;
  name?: string;
  fork?: string;
  resume?: string;
}): BestOfConflict | undefined {
  if (req.resume !== undefined) return "resume";
  if (req.fork !== undefined) return "fork";
  if (req.group !== undefined || req.seal) return "group";
  if (req.name !== undefined) return "name";
  if (req.isolation !== undefined && req.isolation !== "worktree") return "isolation";
  if (req.agent !== undefined && req.agents !== undefined) return "agent_and_agents";
  if (req.agents?.some((a) => a.trim() === "")) return "empty_agent";
  const n = req.n ?? req.agents?.length;
  if (n === undefined) return "no_count";
  if (!Number.isInteger(n) || n < BEST_OF_MIN || n > BEST_OF_MAX) return "count";
  return undefined;
}

/** A best-of run as started: its group and its candidates in order. */
export interface BestOfStarted {
  group: string;
  children: BestOfChild[];
  /** Each spawn's warnings, once each. */
  warnings: string[];
}

/** What a best-of run asks of the core besides its context (the Muster class gives it). */
export interface BestOfCore extends CoreContext {
  spawn(opts: SpawnOptions): Promise<SpawnResult>;
  children(ids: readonly string[]): LoadedChild[];
}

/**
 * Starts the N candidates, one after the other, and records the run; returns at once. A spawn that fails
 * undoes the whole run (the candidates made so far, their worktrees and branches, the group): nothing half-made.
 */
export async function startBestOf(m: BestOfCore, req: BestOfRequest): Promise<BestOfStarted> {
  const conflict = bestOfConflict(req);
  if (conflict) throw new MusterError("invalid_argument", BEST_OF_CONFLICT[conflict]);
  const { n: count, agents, agent, isolation: _worktree, ...base } = req;
  const n = count ?? agents!.length;
  const group = freshGroup(m);
  const made: SpawnResult[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const who = agents ? agents[i % agents.length] : agent;
      const name = nameFor(m, `${group}-${i + 1}`);
      made.push(
        await m.spawn({
          ...base,
          ...(who !== undefined ? { agent: who.trim() } : {}),
          isolation: "worktree",
          group,
          ...(name ? { name } : {}),
        }),
      );
    }
    const children = made.map((s, i) => ({
      n: i + 1,
      id: s.id,
      turnId: s.turnId,
      agent: s.agent,
      ...(s.name !== undefined ? { name: s.name } : {}),
      branch: s.branch!,
    }));
    const record: BestOfRecord = {
      v: 1,
      group,
      task: req.prompt,
      repo: readIsolation(made[0]!.artifactDir)?.repo ?? m.cwd,
      ...(req.verify?.command !== undefined ? { verify: [req.verify.command].flat().join(" ") } : {}),
      children,
      createdAt: new Date().toISOString(),
    };
    writeBestOf(m.paths.bestOf, record);
    await sealGroup(m.paths.groups, group);
    return { group, children, warnings: [...new Set(made.flatMap((s) => s.warnings))] };
  } catch (e) {
    await undoRun(m, group, made);
    throw e;
  }
}

/** A group id no group and no best-of run of this primary has: `best-<8 hex>`. */
function freshGroup(m: CoreContext): string {
  for (;;) {
    const group = `best-${shortId(uuidv7())}`;
    if (!fs.existsSync(path.join(m.paths.groups, `${group}.json`)) && !hasBestOf(m.paths.bestOf, group))
      return group;
  }
}

/** The candidate's name when it is a valid one no child of the primary has; else none. */
function nameFor(m: CoreContext, name: string): string | undefined {
  return isChildName(name) && !childNamed(m.registry.read(), name) ? name : undefined;
}

/** Removes the candidates made so far (their work is nobody's yet: their branches go too), the group, the record. */
async function undoRun(m: CoreContext, group: string, made: SpawnResult[]): Promise<void> {
  const ids = made.map((s) => s.id);
  if (ids.length > 0) await removeChildren(m, ids, { force: true }, "drop").catch(() => undefined);
  for (const id of ids) await removeGroupMember(m.paths.groups, group, id).catch(() => undefined);
  await dropGroup(m.paths.groups, group).catch(() => undefined);
  fs.rmSync(path.join(m.paths.bestOf, `${group}.json`), { force: true });
}

/**
 * Waits for every candidate's task turn (the group is delivered whole, once) and returns their results in the
 * run's order; see waitForGroup.
 */
export async function waitBestOf(
  m: BestOfCore,
  group: string,
  opts: Omit<WaitOptions, "mode" | "turns"> & { onMembers?: (ids: string[]) => void } = {},
): Promise<WaitOutcome> {
  const rec = readBestOf(m.paths.bestOf, group);
  const out = await waitForGroup(m, group, {
    ...opts,
    turns: new Map(rec.children.map((c) => [c.id, c.turnId])),
  });
  const order = new Map(rec.children.map((c) => [c.id, c.n]));
  const at = (id: string) => order.get(id) ?? Number.MAX_SAFE_INTEGER;
  return { ...out, results: [...out.results].sort((a, b) => at(a.id) - at(b.id)) };
}
