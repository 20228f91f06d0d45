/**
 * The tree's pause (`primaries/<primary>/pause.json`): written when a turn settles on a terminal provider error
 * (an exhausted quota, a refused credential), since every other turn of the tree would spend its start on the
 * same refusal. While it holds no turn of the tree starts (each waits, visibly); turns running finish. It lifts
 * when `resume-tree` removes it, or by itself once its reset time has gone by.
 */
import * as fs from "node:fs";
import { writeJsonAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { READ_CAPS, readJsonBoundedIfExists } from "../util/safe-read.js";
import type { ProviderError, ProviderErrorKind } from "./events.js";
import { primaryPathsAt } from "./layout.js";

/** The provider errors that pause the tree: retrying them spends turns and gets nothing. */
export const TERMINAL_KINDS: readonly ProviderErrorKind[] = ["quota", "auth"];

export interface TreePause {
  v: 1;
  /** This pause's own id: a parent is told of each pause once (its receipt is `pause:<id>`). */
  pauseId: string;
  kind: ProviderErrorKind;
  /** One line: what the provider said. */
  reason: string;
  /** When it lifts by itself (the provider's reset time), if known. */
  resetAt?: string;
  /** The child and turn whose error paused the tree. */
  child: string;
  turnId: string;
  since: string;
}

export const isTerminal = (e: ProviderError | undefined): e is ProviderError =>
  e !== undefined && TERMINAL_KINDS.includes(e.kind);

function readQuiet(primaryDir: string): TreePause | undefined {
  try {
    const p = readJsonBoundedIfExists<TreePause>(primaryPathsAt(primaryDir).pause, READ_CAPS.smallJson);
    return p?.v === 1 && typeof p.pauseId === "string" && typeof p.reason === "string" ? p : undefined;
  } catch {
    // A torn or planted file pauses nothing: the record is only ever written whole.
    return undefined;
  }
}

/** The pause in force now, or undefined (none, or its reset time has gone by). */
export function pauseInForce(primaryDir: string, now = Date.now()): TreePause | undefined {
  const p = readQuiet(primaryDir);
  if (!p) return undefined;
  if (p.resetAt && Date.parse(p.resetAt) <= now) return undefined;
  return p;
}

/**
 * Pauses the tree for `error` (crash-safe: temp + fsync + rename). A pause already in force stays as it is:
 * the first refusal is the one the parent hears of. Returns the pause in force.
 */
export function pauseTree(
  primaryDir: string,
  error: ProviderError,
  by: { child: string; turnId: string },
): TreePause {
  const held = pauseInForce(primaryDir);
  if (held) return held;
  const pause: TreePause = {
    v: 1,
    pauseId: uuidv7(),
    kind: error.kind,
    reason: error.message.split("\n", 1)[0]!.slice(0, 500),
    ...(error.resetAt ? { resetAt: error.resetAt } : {}),
    child: by.child,
    turnId: by.turnId,
    since: new Date().toISOString(),
  };
  writeJsonAtomic(primaryPathsAt(primaryDir).pause, pause);
  return pause;
}

/** Lifts the pause; returns the one that was in force (undefined: none was). */
export function resumeTree(primaryDir: string): TreePause | undefined {
  const held = pauseInForce(primaryDir);
  fs.rmSync(primaryPathsAt(primaryDir).pause, { force: true });
  return held;
}

/** One line for status displays: `paused: <reason>, until <reset>`. */
export function pauseLine(p: Pick<TreePause, "kind" | "reason" | "resetAt">): string {
  return `paused (${p.kind}): ${p.reason}${p.resetAt ? `, until ${p.resetAt}` : ""}`;
}
