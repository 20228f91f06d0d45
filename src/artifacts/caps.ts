/**
 * Caps: limits enforced outside the model, by the child host (it sees every event) and at spawn.
 * A child's caps (meta.json `caps`) cover the child and everything it spawns; the tree's caps
 * (budget.json `caps`) cover every child of the primary since the budget was set. Per turn: wall clock
 * and idle time; cumulative: turns, tool calls, tokens, cost.
 */
import * as fs from "node:fs";
import { readJsonIfExists } from "../util/fsx.js";
import { READ_CAPS } from "../util/safe-read.js";
import { MAX_TIMER_MS, timerProblem } from "../util/timer-limit.js";
import type { Caps, ChildMeta, MusterEvent } from "./events.js";
import { childFiles, primaryPathsAt } from "./layout.js";
import { readAllRecords } from "./reader.js";

export type { Caps };

export type CapName = keyof Caps;
export const CAP_NAMES: readonly CapName[] = [
  "maxTimeMs",
  "idleTimeoutMs",
  "maxTurns",
  "maxToolCalls",
  "maxTokens",
  "maxCost",
];

/** The flag spelling of each cap: what an `exhausted` reason names. */
export const CAP_FLAG: Record<CapName, string> = {
  maxTimeMs: "max-time",
  idleTimeoutMs: "idle-timeout",
  maxTurns: "max-turns",
  maxToolCalls: "max-tool-calls",
  maxTokens: "max-tokens",
  maxCost: "max-cost",
};

export interface CapUsage {
  turns: number;
  toolCalls: number;
  tokens: number;
  cost: number;
}

export const NO_USAGE: CapUsage = { turns: 0, toolCalls: 0, tokens: 0, cost: 0 };

export const hasCaps = (c: Caps | undefined): c is Caps => !!c && CAP_NAMES.some((k) => c[k] !== undefined);

export const addUsage = (a: CapUsage, b: CapUsage): CapUsage => ({
  turns: a.turns + b.turns,
  toolCalls: a.toolCalls + b.toolCalls,
  tokens: a.tokens + b.tokens,
  cost: a.cost + b.cost,
});

/** The tighter of two sets of caps, cap by cap. */
export function narrowCaps(a: Caps | undefined, b: Caps | undefined): Caps {
  const out: Caps = {};
  for (const k of CAP_NAMES) {
    const x = a?.[k];
    const y = b?.[k];
    const v = x === undefined ? y : y === undefined ? x : Math.min(x, y);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** Checks a caps object read from a file or a caller: only known caps, each a positive finite number. */
export function capsProblem(c: unknown): string | undefined {
  if (typeof c !== "object" || c === null || Array.isArray(c)) return "caps must be an object";
  for (const [k, v] of Object.entries(c)) {
    if (!(CAP_NAMES as readonly string[]).includes(k)) return `unknown cap "${k}"`;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) return `cap ${k} must be a positive number`;
    const tooLong = k === "maxTimeMs" || k === "idleTimeoutMs" ? timerProblem(v, `cap ${k}`) : undefined;
    if (tooLong) return `${tooLong} (${MAX_TIMER_MS} ms)`;
  }
  return undefined;
}

/** Why the cumulative caps are spent (one line naming the cap), or undefined while they last. */
export function capSpent(caps: Caps | undefined, used: CapUsage, scope: string): string | undefined {
  if (!caps) return undefined;
  const over = (k: CapName, n: number, unit = ""): string =>
    `cap reached: ${CAP_FLAG[k]} ${unit}${caps[k]} (${scope} used ${unit}${n})`;
  if (caps.maxTurns !== undefined && used.turns >= caps.maxTurns) return over("maxTurns", used.turns);
  if (caps.maxToolCalls !== undefined && used.toolCalls >= caps.maxToolCalls)
    return over("maxToolCalls", used.toolCalls);
  if (caps.maxTokens !== undefined && used.tokens >= caps.maxTokens) return over("maxTokens", used.tokens);
  if (caps.maxCost !== undefined && used.cost >= caps.maxCost)
    return over("maxCost", Math.round(used.cost * 10000) / 10000, "$");
  return undefined;
}

/** One child's cap usage from its events (since `since`): a turn counts when it ran or is still open. */
export function usageOfEvents(events: MusterEvent[], since?: string): CapUsage {
  const u = { ...NO_USAGE };
  // ISO 8601 UTC timestamps from the same clock compare as strings.
  const counts = (ts: string): boolean => since === undefined || ts >= since;
  const started = new Set<string>();
  const ran = new Set<string>();
  const settled = new Set<string>();
  for (const e of events) {
    if (e.type === "turn_started" && counts(e.ts)) started.add(e.turnId);
    else if (e.type === "runner_started") ran.add(e.turnId);
    else if (e.type === "completion") settled.add(e.turnId);
    else if (e.type === "tool_activity" && e.phase === "start" && counts(e.ts)) u.toolCalls += 1;
    else if (e.type === "usage" && counts(e.ts)) {
      u.tokens += e.usage.input + e.usage.output;
      u.cost += e.usage.cost ?? 0;
    }
  }
  for (const t of started) if (ran.has(t) || !settled.has(t)) u.turns += 1;
  return u;
}

// A host checking caps re-reads the tree once a second: a log that has not changed is not read again.
const seen = new Map<string, { size: number; mtimeMs: number; since: string | undefined; usage: CapUsage }>();

function cachedUsage(file: string, since: string | undefined): CapUsage {
  const st = fs.statSync(file);
  const hit = seen.get(file);
  if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs && hit.since === since) return hit.usage;
  const usage = usageOfEvents(readAllRecords<MusterEvent>(file), since);
  if (seen.size > 4096) seen.clear();
  seen.set(file, { size: st.size, mtimeMs: st.mtimeMs, since, usage });
  return usage;
}

interface ChildUsage {
  parent: string | null;
  usage: CapUsage;
}

/** Every child of a primary with its parent and usage (since `since`); unreadable children are skipped. */
export function usageByChild(primaryDir: string, since?: string): Map<string, ChildUsage> {
  const out = new Map<string, ChildUsage>();
  const layout = primaryPathsAt(primaryDir);
  let names: string[];
  try {
    names = fs.readdirSync(layout.artifacts);
  } catch {
    return out;
  }
  for (const id of names) {
    const files = childFiles(layout.artifactDir(id));
    try {
      const meta = readJsonIfExists<ChildMeta>(files.meta, READ_CAPS.smallJson);
      if (!meta) continue;
      out.set(id, { parent: meta.parent, usage: cachedUsage(files.events, since) });
    } catch {
      // A sibling's unreadable files must not stop this child's turn; its own status names them.
    }
  }
  return out;
}

/**
 * Total size of the event logs of `root`'s descendants: it grows while any of them records anything, which
 * is how a parent waiting on its children (saying nothing itself) is told apart from an idle one.
 */
export function descendantLogBytes(primaryDir: string, root: string): number {
  const layout = primaryPathsAt(primaryDir);
  const parents = new Map<string, ChildUsage>();
  let names: string[];
  try {
    names = fs.readdirSync(layout.artifacts);
  } catch {
    return 0;
  }
  for (const id of names) {
    try {
      const meta = readJsonIfExists<ChildMeta>(childFiles(layout.artifactDir(id)).meta, READ_CAPS.smallJson);
      if (meta) parents.set(id, { parent: meta.parent, usage: NO_USAGE });
    } catch {}
  }
  let bytes = 0;
  for (const id of subtreeOf(parents, root)) {
    if (id === root) continue;
    try {
      bytes += fs.statSync(childFiles(layout.artifactDir(id)).events).size;
    } catch {}
  }
  return bytes;
}

/** The ids of `root` and all its descendants, by the parent links in `all`. */
export function subtreeOf(all: Map<string, ChildUsage>, root: string): Set<string> {
  const members = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [id, c] of all) {
      if (c.parent && members.has(c.parent) && !members.has(id)) {
        members.add(id);
        grew = true;
      }
    }
  }
  return members;
}

/** The summed usage of the given children (all of them without `ids`), leaving out `except`. */
export function sumUsage(all: Map<string, ChildUsage>, ids?: Set<string>, except?: string): CapUsage {
  let u = { ...NO_USAGE };
  for (const [id, c] of all) if ((!ids || ids.has(id)) && id !== except) u = addUsage(u, c.usage);
  return u;
}

/**
 * What a child may still use under caps it is spawned beneath: each cumulative cap minus what was used,
 * the turn's wall clock minus the time its turn has run (when one is open). A spent cap is 0.
 */
export function remainingCaps(caps: Caps, used: CapUsage, turnRanMs?: number): Caps {
  const out: Caps = {};
  const left = (max: number | undefined, n: number): number | undefined =>
    max === undefined ? undefined : Math.max(0, max - n);
  const put = (k: CapName, v: number | undefined): void => {
    if (v !== undefined) out[k] = v;
  };
  put("maxTimeMs", left(caps.maxTimeMs, turnRanMs ?? 0));
  put("idleTimeoutMs", caps.idleTimeoutMs);
  put("maxTurns", left(caps.maxTurns, used.turns));
  put("maxToolCalls", left(caps.maxToolCalls, used.toolCalls));
  put("maxTokens", left(caps.maxTokens, used.tokens));
  put("maxCost", left(caps.maxCost, used.cost));
  return out;
}
