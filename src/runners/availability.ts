import { binaryOf, findOnPath } from "./clis/shared.js";
import { getRunner } from "./registry.js";

/** Whether a child of this runner could start here (with the CLI's path, when it drives one), and if not, why. */
export function runnerReadiness(
  runnerName: string,
  env: Record<string, string | undefined>,
): { ready: true; path?: string } | { ready: false; why: string } {
  const runner = getRunner(runnerName);
  if (!runner) return { ready: false, why: `runner "${runnerName}" is not built into this muster` };
  if (!runner.binary) return { ready: true };
  const bin = binaryOf(runner.binary, env);
  const found = findOnPath(bin, env.PATH);
  if (found) return { ready: true, path: found };
  return {
    ready: false,
    why: env[runner.binary.envVar]
      ? `${runner.binary.envVar}=${bin} is not an executable file`
      : `${bin} is not on PATH`,
  };
}
