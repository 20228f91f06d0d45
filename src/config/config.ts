import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { writeJsonAtomic } from "../util/fsx.js";
import { withFileLock } from "../util/lock.js";
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

export const configFile = (env: NodeJS.ProcessEnv = process.env): string =>
  path.join(configDir(env), "config.json");

/**
 * The config file as the object it holds, or an empty one and why it could not be read (one line). A missing
 * file is an empty config and no problem.
 */
export function readConfigFile(env: NodeJS.ProcessEnv = process.env): {
  config: Record<string, unknown>;
  problem?: string;
} {
  const file = configFile(env);
  let text: string;
  try {
    // Bounded and non-blocking: a FIFO or /dev/zero here is a problem, not a hang. A symlink (dotfiles) is fine.
    text = readFileBounded(file, READ_CAPS.smallJson, { follow: true }).toString("utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { config: {} };
    return { config: {}, problem: (e as Error).message };
  }
  try {
    const raw = JSON.parse(text) as unknown;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw))
      return { config: {}, problem: `${file}: expected a JSON object` };
    return { config: raw as Record<string, unknown> };
  } catch (e) {
    return { config: {}, problem: `${file}: invalid JSON (${(e as Error).message})` };
  }
}

/** Reads the config file; a missing file is an empty config, a broken one a warning (never a crash). */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): {
  config: MusterConfig;
  warnings: string[];
} {
  const { config, problem } = readConfigFile(env);
  return { config: config as MusterConfig, warnings: problem ? [`${problem}; ignored`] : [] };
}

/**
 * Changes one part of the config file under its lock; the file is rewritten whole, atomically. A file that cannot
 * be read is refused (rewriting it would lose what it holds).
 */
export async function updateConfig(
  env: NodeJS.ProcessEnv,
  change: (config: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const file = configFile(env);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  await withFileLock(file, () => {
    const { config, problem } = readConfigFile(env);
    if (problem) throw new MusterError("invalid_config", `${problem}; fix it first`);
    writeJsonAtomic(file, change(config));
  });
}
