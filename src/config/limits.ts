import { SETTINGS, type Settings } from "../base/settings/resolve.js";
import { loadSettings } from "./settings.js";

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

/** The limits of settings already resolved (loadSettings). */
export const limitsOf = (s: Settings): Limits => ({
  maxRunning: s.maxRunning,
  maxDepth: s.maxDepth,
  maxLiveNodes: s.maxLive,
});

export const limitsFrom = (env: NodeJS.ProcessEnv): Limits => limitsOf(loadSettings(env).values);
