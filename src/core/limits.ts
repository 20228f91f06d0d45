export { DEFAULT_LIMITS, type Limits, limitsFrom, limitsOf } from "../config/limits.js";

import { MusterError } from "../base/errors.js";
import { setting } from "../base/settings/resolve.js";
import type { Limits } from "../config/limits.js";
import type { LoadedChild } from "./children.js";

/** Refuses a spawn that would break the tree's limits, or that a no-spawn ancestor forbids. Never silent. */
export function checkLineage(
  limits: Limits,
  depth: number,
  env: NodeJS.ProcessEnv,
  total: number,
  children: () => LoadedChild[],
): void {
  if (setting(env, "noSpawn")) {
    throw new MusterError(
      "limit_reached",
      `this child's agent may not start children (its profile says spawn: false)`,
    );
  }
  if (depth + 1 > limits.maxDepth) {
    throw new MusterError(
      "limit_reached",
      `depth limit reached: a child here would be level ${depth + 1}; the limit is ${limits.maxDepth} (MUSTER_MAX_DEPTH)`,
    );
  }
  // Fewer children than the limit in all: no need to read every child's events to count the live ones.
  if (total < limits.maxLiveNodes) return;
  const live = children().filter((c) => c.status !== "closed" && c.status !== "lost").length;
  if (live >= limits.maxLiveNodes) {
    throw new MusterError(
      "limit_reached",
      `live-node limit reached: ${live} children of this primary are alive; the limit is ${limits.maxLiveNodes} (MUSTER_MAX_LIVE)`,
      { next: { action: "cancel" } },
    );
  }
}
