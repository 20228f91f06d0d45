import { loadConfig } from "./config.js";

/** Bounds on one primary's tree (DESIGN §11); env beats config beats the default. */
export interface Limits {
  /** Turns running at once across the primary; more wait for a slot. */
  maxRunning: number;
  /** Levels of children below the primary. */
  maxDepth: number;
  /** Children alive at once (settled-and-exited ones do not count). */
  maxLiveNodes: number;
}

export const DEFAULT_LIMITS: Limits = { maxRunning: 4, maxDepth: 8, maxLiveNodes: 256 };

function pick(envValue: string | undefined, configValue: number | undefined, fallback: number): number {
  const n = envValue !== undefined && envValue !== "" ? Number(envValue) : configValue;
  return n !== undefined && Number.isInteger(n) && n >= 1 ? n : fallback;
}

export function limitsFrom(env: NodeJS.ProcessEnv): Limits {
  const { config } = loadConfig(env);
  return {
    maxRunning: pick(env.MUSTER_MAX_RUNNING, config.maxRunning, DEFAULT_LIMITS.maxRunning),
    maxDepth: pick(env.MUSTER_MAX_DEPTH, config.maxDepth, DEFAULT_LIMITS.maxDepth),
    maxLiveNodes: pick(env.MUSTER_MAX_LIVE, config.maxLiveNodes, DEFAULT_LIMITS.maxLiveNodes),
  };
}
