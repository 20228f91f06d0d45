/**
 * A turn's wait while its tree is paused (artifacts/tree-pause.ts): checked before the turn asks for a run
 * slot, so a held turn takes none. Each pause it waits under is recorded once (`turn_held`: status, ls and
 * top say "paused: <reason>, until <reset>"); the wait ends when the pause lifts (resume-tree, or its reset
 * time gone by) or the child is stopped.
 */
import { pauseInForce, type TreePause } from "../artifacts/tree-pause.js";

// How often a held turn looks again: the pause file is small and a lift is a person's act, not a race.
const LOOK_MS = 250;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Waits while the tree is paused; `held` hears each pause it waits under (once each). False when `stopped()`
 * ended the wait. `pauseOf` is where the pause is read: the primary's file here, a grant's word far away.
 */
export async function waitWhilePaused(
  pauseOf: () => TreePause | undefined,
  held: (p: TreePause) => void,
  stopped: () => boolean,
): Promise<boolean> {
  let told: string | undefined;
  for (;;) {
    if (stopped()) return false;
    const p = pauseOf();
    if (!p) return true;
    if (p.pauseId !== told) held(p);
    told = p.pauseId;
    const untilReset = p.resetAt ? Date.parse(p.resetAt) - Date.now() : LOOK_MS;
    await sleep(Math.max(10, Math.min(LOOK_MS, untilReset)));
  }
}

/** The pause in force for a host on this machine: its primary's pause file. */
export const localPause = (primaryDir: string) => (): TreePause | undefined => pauseInForce(primaryDir);
