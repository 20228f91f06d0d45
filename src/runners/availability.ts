import { findOnPath } from "../util/which.js";
import { binaryOf } from "./clis/shared.js";
import { getRunner } from "./registry.js";

export type Readiness = { ready: true; path?: string } | { ready: false; why: string };

/**
 * Whether a child of this runner could start where `find` looks (this machine's PATH unless a place's own
 * lookup is given), with the CLI's path when it drives one, and if not, why.
 */
export async function runnerReadinessWith(
  runnerName: string,
  env: Record<string, string | undefined>,
  find: (command: string) => Promise<string | undefined>,
): Promise<Readiness> {
  const runner = getRunner(runnerName);
  if (!runner) return { ready: false, why: `runner "${runnerName}" is not built into this muster` };
  if (!runner.binary) return { ready: true };
  const bin = binaryOf(runner.binary, env);
  return readinessOf(runner.binary.envVar, bin, env, await find(bin));
}

/** runnerReadinessWith on this machine's PATH, synchronously. */
export function runnerReadiness(runnerName: string, env: Record<string, string | undefined>): Readiness {
  const runner = getRunner(runnerName);
  if (!runner) return { ready: false, why: `runner "${runnerName}" is not built into this muster` };
  if (!runner.binary) return { ready: true };
  const bin = binaryOf(runner.binary, env);
  return readinessOf(runner.binary.envVar, bin, env, findOnPath(bin, env.PATH));
}

function readinessOf(
  envVar: string,
  bin: string,
  env: Record<string, string | undefined>,
  found: string | undefined,
): Readiness {
  if (found) return { ready: true, path: found };
  return {
    ready: false,
    why: env[envVar] ? `${envVar}=${bin} is not an executable file` : `${bin} is not on PATH`,
  };
}
