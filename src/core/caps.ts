/**
 * Caps at spawn: a new child gets the tighter of what it asks for (flags, MCP arguments, its profile) and
 * what its spawning child still has left (so no child escapes a cap by spawning children), and no child
 * starts when the tree's caps are spent. The host enforces the rest as turns run (child/caps-guard.ts).
 */
import { readBudget } from "../artifacts/budget.js";
import {
  CAP_FLAG,
  CAP_NAMES,
  type Caps,
  capSpent,
  capsProblem,
  hasCaps,
  narrowCaps,
  remainingCaps,
  subtreeOf,
  sumUsage,
  usageByChild,
} from "../artifacts/caps.js";
import type { MusterEvent } from "../artifacts/events.js";
import type { PrimaryPaths } from "../artifacts/layout.js";
import { MusterError } from "../base/errors.js";
import { isFullId } from "../util/ids.js";
import { childStores } from "./stores.js";

/** How long the spawning child's open turn has run (undefined without one). */
function openTurnRanMs(events: MusterEvent[]): number | undefined {
  let started: string | undefined;
  for (const e of events) {
    if (e.type === "turn_started") started = e.ts;
    else if (e.type === "completion" && started) started = undefined;
  }
  return started === undefined ? undefined : Math.max(0, Date.now() - Date.parse(started));
}

/** The caps a new child runs under, or a refusal (limit_reached) when a cap above it is already spent. */
export function capsForSpawn(
  paths: PrimaryPaths,
  parent: string | null,
  asked: Caps | undefined,
  profile: Caps | undefined,
): Caps | undefined {
  let caps = narrowCaps(asked, profile);
  const budget = readBudget(paths.dir);
  if (hasCaps(budget?.caps)) {
    const spent = capSpent(budget.caps, sumUsage(usageByChild(paths.dir, budget.since)), "the tree");
    if (spent) throw new MusterError("limit_reached", `no new child: tree ${spent}`);
  }
  // A parent id from the environment names a folder: only a well-formed one is looked up.
  if (parent && isFullId(parent)) {
    const store = childStores(paths).child(parent);
    const meta = store.readMeta();
    if (hasCaps(meta?.caps)) {
      const all = usageByChild(paths.dir);
      const used = sumUsage(all, subtreeOf(all, parent));
      const left = remainingCaps(meta.caps, used, openTurnRanMs(store.readEvents()));
      const gone = CAP_NAMES.find((k) => left[k] === 0);
      if (gone)
        throw new MusterError(
          "limit_reached",
          `no new child: its parent's cap ${CAP_FLAG[gone]} is spent (children share their parent's caps)`,
        );
      caps = narrowCaps(caps, left);
    }
  }
  return hasCaps(caps) ? caps : undefined;
}

export type { Caps };
export { CAP_NAMES };

/** Checks caps given by a caller (MCP arguments): only known caps, each a positive number. */
export function assertCaps(c: unknown): Caps {
  const why = capsProblem(c);
  if (why) throw new MusterError("invalid_argument", why);
  return c as Caps;
}
