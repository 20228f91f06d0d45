import * as fs from "node:fs";
import { readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { READ_CAPS } from "../util/safe-read.js";
import { usageOfEvents } from "./caps.js";
import type { Caps, MusterEvent } from "./events.js";
import { childFiles, primaryPathsAt } from "./layout.js";
import { readAllRecords } from "./reader.js";

/** A shared budget for a primary's whole tree; any field may be absent (unbounded). */
export interface Budget {
  v: 1;
  turns?: number;
  tokens?: number;
  /** US dollars, where runners report cost. */
  cost?: number;
  /** Caps on every turn of the tree (artifacts/caps.ts): unlike the limits above they end running turns. */
  caps?: Caps;
  /** When the budget was set (ISO 8601): only what the tree did from then on counts against it. */
  since?: string;
}

export interface TreeUsage {
  turns: number;
  tokens: number;
  cost: number;
}

/** `primaries/<primary>/budget.json`, from the primary's dir. */
export const budgetFile = (primaryDir: string): string => primaryPathsAt(primaryDir).budget;

/** The budget in force (null without one), what the tree used since it was set, and why it is spent. */
export function budgetReport(primaryDir: string): {
  budget: Budget | null;
  used: TreeUsage;
  exhausted: string | null;
} {
  const budget = readBudget(primaryDir) ?? null;
  const used = treeUsage(primaryDir, budget?.since);
  return { budget, used, exhausted: budgetExhausted(budget ?? undefined, used) ?? null };
}

/**
 * Sets (or with null clears) the shared budget. A new budget counts from now: turns that ran before it
 * do not use it up. Changing a budget in force keeps its start (raising a limit does not refill it).
 */
export function writeBudget(primaryDir: string, b: Omit<Budget, "v" | "since"> | null): void {
  const file = budgetFile(primaryDir);
  if (b === null) {
    fs.rmSync(file, { force: true });
    return;
  }
  const since = readBudget(primaryDir)?.since ?? new Date().toISOString();
  writeJsonAtomic(file, { v: 1, ...b, since });
}

export const readBudget = (primaryDir: string): Budget | undefined =>
  readJsonIfExists<Budget>(budgetFile(primaryDir), READ_CAPS.smallJson);

/**
 * What the whole tree has used since `since` (all of it when absent): the turns that ran and the usage
 * every child reported. A turn counts once it started, unless it settled without its runner ever starting
 * (refused as exhausted, cancelled while queued): a turn that never ran used nothing.
 */
export function treeUsage(primaryDir: string, since?: string): TreeUsage {
  const usage: TreeUsage = { turns: 0, tokens: 0, cost: 0 };
  const layout = primaryPathsAt(primaryDir);
  let children: string[];
  try {
    children = fs.readdirSync(layout.artifacts);
  } catch {
    return usage;
  }
  for (const child of children) {
    let events: MusterEvent[];
    try {
      events = readAllRecords<MusterEvent>(childFiles(layout.artifactDir(child)).events);
    } catch {
      continue; // a sibling's unreadable log (a symlink, a FIFO) must not stop this turn; its own status names it
    }
    const u = usageOfEvents(events, since);
    usage.turns += u.turns;
    usage.tokens += u.tokens;
    usage.cost += u.cost;
  }
  return usage;
}

/**
 * The tree budget's verdict on a new turn from the usage under `primaryDir` (undefined: none set, or it
 * lasts). `started`: that turn's own turn_started is already recorded, and is not counted against it.
 */
export function treeBudgetSpent(primaryDir: string, started: boolean): string | undefined {
  // Without a budget there is nothing to add up: the tree's events are read only when one is set.
  const budget = readBudget(primaryDir);
  if (!budget) return undefined;
  const used = treeUsage(primaryDir, budget.since);
  return budgetExhausted(budget, started ? { ...used, turns: used.turns - 1 } : used);
}

/** Why a new turn may not start (a one-line reason), or undefined while the budget lasts. */
export function budgetExhausted(budget: Budget | undefined, used: TreeUsage): string | undefined {
  if (!budget) return undefined;
  if (budget.turns !== undefined && used.turns >= budget.turns)
    return `budget exhausted: ${used.turns} of ${budget.turns} turns used`;
  if (budget.tokens !== undefined && used.tokens >= budget.tokens)
    return `budget exhausted: ${used.tokens} of ${budget.tokens} tokens used`;
  if (budget.cost !== undefined && used.cost >= budget.cost)
    return `budget exhausted: $${used.cost.toFixed(4)} of $${budget.cost} used`;
  return undefined;
}
