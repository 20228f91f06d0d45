/**
 * The container engine muster drives: Docker or Podman through their own CLIs. The CLIs rather than the
 * engine API (dockerode): the two take the same argv for everything muster does, a person's `attach` needs
 * `exec -it` from the CLI anyway, and `DOCKER_HOST` / `CONTAINER_HOST` (a remote engine over `ssh://`
 * included), contexts and credentials work as they do for the user, with no code of ours in between.
 */
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { rawSetting } from "../../base/settings/resolve.js";
import { findOnPath } from "../../util/which.js";
import type { RemoteRun } from "../far/remote.js";
import { execLocal } from "../local/exec.js";
import { ExecFailure } from "../place.js";

export interface ContainerEngine {
  /** `docker` or `podman` (what the CLI is). */
  kind: "docker" | "podman";
  /** The CLI's path. */
  cli: string;
  /** The CLI's environment: the caller's (DOCKER_HOST, CONTAINER_HOST, DOCKER_CONFIG and the like apply). */
  env: NodeJS.ProcessEnv;
}

/** The engine MUSTER_CONTAINER_ENGINE names, else docker on PATH, else podman; a clear error when none. */
export function engineOf(env: NodeJS.ProcessEnv): ContainerEngine {
  const named = rawSetting(env, "containerEngine");
  const tries = named ? [named] : ["docker", "podman"];
  for (const t of tries) {
    const cli = findOnPath(t, env.PATH);
    if (cli) return { kind: /podman/.test(path.basename(cli)) ? "podman" : "docker", cli, env };
  }
  throw new MusterError(
    "unsupported",
    named
      ? `MUSTER_CONTAINER_ENGINE=${named}: no such command on PATH`
      : "no container engine: neither docker nor podman is on PATH (install one, or set MUSTER_CONTAINER_ENGINE)",
  );
}

/** Runs the engine's CLI on argv; resolves on any exit code, throws `unreachable` when it does not end in time. */
export async function runEngine(
  engine: ContainerEngine,
  argv: readonly string[],
  opts: { input?: string | Buffer; timeoutMs?: number } = {},
): Promise<RemoteRun> {
  const timeoutMs = opts.timeoutMs ?? 60_000;
  try {
    return await execLocal([engine.cli, ...argv], {
      env: engine.env,
      timeoutMs,
      ...(opts.input !== undefined ? { input: opts.input } : {}),
    });
  } catch (e) {
    if (e instanceof ExecFailure && e.kind === "timeout")
      throw new MusterError("unreachable", `${engine.kind} ${argv[0]}: no answer within ${timeoutMs} ms`);
    throw new MusterError("unsupported", `${engine.cli}: ${(e as Error).message}`);
  }
}

/**
 * The engine's one-line complaint, for an error of ours: its last stderr line that says something (not the
 * "Run 'docker run --help'" hint, not a warning), without the CLI's own prefix.
 */
export const engineSaid = (r: RemoteRun): string =>
  r.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^(Run|See) '.*--help'/.test(l) && !/^WARNING:/.test(l))
    .pop()
    ?.replace(/^(docker|podman|Error): /, "") ?? `exit ${r.exitCode}`;
