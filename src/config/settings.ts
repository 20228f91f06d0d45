import { type ResolvedSettings, resolveSettings } from "../base/settings/resolve.js";
import { loadConfig } from "./config.js";

export type LoadedSettings = ResolvedSettings & { configWarnings: string[] };

/** Every setting from one read of the environment and the user's config file (with its own warnings). */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): LoadedSettings {
  const { config, warnings } = loadConfig(env);
  return { ...resolveSettings(env, config as Record<string, unknown>), configWarnings: warnings };
}
