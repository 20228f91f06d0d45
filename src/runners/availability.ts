import { binaryOf, findOnPath } from "./clis/shared.js";
import { getRunner } from "./registry.js";

/** Whether a child of this runner could start here, and if not, why (one short clause). */
export function runnerReadiness(
  runnerName: string,
  env: Record<string, string | undefined>,
): { ready: true } | { ready: false; why: string } {
  const runner = getRunner(runnerName);
  if (!runner) return { ready: false, why: `runner "${runnerName}" is not built into this muster` };
  if (!runner.binary) return { ready: true };
  const bin = binaryOf(runner.binary, env);
  if (findOnPath(bin, env.PATH)) return { ready: true };
  return {
    ready: false,
    why: env[runner.binary.envVar]
      ? `${runner.binary.envVar}=${bin} is not an executable file`
      : `${bin} is not on PATH`,
  };
}
