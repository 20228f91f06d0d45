import { SETTINGS, setting } from "../base/settings/resolve.js";
import { loadConfig } from "./config.js";

/** Bounds on one primary's tree (DESIGN §11); env beats config beats the default (base/settings). */
export interface Limits {
  /** Turns running at once across the primary; more wait for a slot. */
  maxRunning: number;
  /** Levels of children below the primary. */
  maxDepth: number;
  /** Children alive at once (settled-and-exited ones do not count). */
  maxLiveNodes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxRunning: SETTINGS.maxRunning.default,
  maxDepth: SETTINGS.maxDepth.default,
  maxLiveNodes: SETTINGS.maxLive.default,
};

export function limitsFrom(env: NodeJS.ProcessEnv): Limits {
  const config = loadConfig(env).config as Record<string, unknown>;
  return {
    maxRunning: setting(env, "maxRunning", config),
    maxDepth: setting(env, "maxDepth", config),
    maxLiveNodes: setting(env, "maxLive", config),
  };
}
