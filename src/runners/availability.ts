import { findOnPath } from "../util/which.js";
import { binaryOf } from "./common/shared.js";
import { getRunner } from "./registry.js";

export type Readiness = { ready: true; path?: string } | { ready: false; why: string };

/** The program a runner needs found, or its readiness when nothing needs finding. */
function programOf(
  runnerName: string,
  env: Record<string, string | undefined>,
): Readiness | { envVar: string; bin: string } {
  const runner = getRunner(runnerName);
  if (!runner) return { ready: false, why: `runner "${runnerName}" is not built into this muster` };
  if (!runner.binary) return { ready: true };
  return { envVar: runner.binary.envVar, bin: binaryOf(runner.binary, env) };
}

/**
 * Whether a child of this runner could start where `find` looks (a place's own lookup), with the CLI's
 * path when it drives one, and if not, why.
 */
export async function runnerReadinessWith(
  runnerName: string,
  env: Record<string, string | undefined>,
  find: (command: string) => Promise<string | undefined>,
): Promise<Readiness> {
  const p = programOf(runnerName, env);
  return "bin" in p ? readinessOf(p.envVar, p.bin, env, await find(p.bin)) : p;
}

/** runnerReadinessWith on this machine's PATH, synchronously. */
export function runnerReadiness(runnerName: string, env: Record<string, string | undefined>): Readiness {
  const p = programOf(runnerName, env);
  return "bin" in p ? readinessOf(p.envVar, p.bin, env, findOnPath(p.bin, env.PATH)) : p;
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
