import * as os from "node:os";
import * as path from "node:path";
import { READ_CAPS, readFileBounded } from "../util/safe-read.js";

/** User configuration: `${XDG_CONFIG_HOME:-~/.config}/muster/config.json` (all fields optional). */
export interface MusterConfig {
  /** Default model for new children when neither the call nor the profile names one. */
  model?: string;
  /** Default reasoning level, likewise. */
  reasoning?: string;
  /** Read other harnesses' agent folders (.claude/agents, .pi/agents, .opencode/agents, …); default true. */
  compatAgents?: boolean;
  /** Extra catalog entries: models a runner accepts beyond the ones it declares. */
  models?: { runner: string; id: string; reasoning?: string[]; defaultReasoning?: string }[];
  /** Running turns per primary (default 4); more wait for a slot. */
  maxRunning?: number;
  /** Levels of children below the primary (default 8). */
  maxDepth?: number;
  /** Live children per primary (default 256). */
  maxLiveNodes?: number;
}

export const configDir = (env: NodeJS.ProcessEnv = process.env): string =>
  path.join(env.XDG_CONFIG_HOME || path.join(env.HOME || os.homedir(), ".config"), "muster");

/** Reads the config file; a missing file is an empty config, a broken one a warning (never a crash). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): {
  config: MusterConfig;
  warnings: string[];
} {
  const file = path.join(configDir(env), "config.json");
  let text: string;
  try {
    // Bounded and non-blocking: a FIFO or /dev/zero here is a warning, not a hang. A symlink (dotfiles) is fine.
    text = readFileBounded(file, READ_CAPS.smallJson, { follow: true }).toString("utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { config: {}, warnings: [] };
    return { config: {}, warnings: [`${(e as Error).message}; ignored`] };
  }
  try {
    const raw = JSON.parse(text) as unknown;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      return { config: {}, warnings: [`${file}: expected a JSON object; ignored`] };
    }
    return { config: raw as MusterConfig, warnings: [] };
  } catch (e) {
    return { config: {}, warnings: [`${file}: invalid JSON (${(e as Error).message}); ignored`] };
  }
}
