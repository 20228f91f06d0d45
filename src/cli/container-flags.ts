/**
 * `spawn --in container[:<image>]` and the flags that shape the container (`--network`, `--mount`, `--cpus`,
 * `--memory`, `--pass-env`), read into a ContainerRequest. The values themselves are checked at spawn, with the
 * profile's `container:` merged under them (place/container/spec.ts).
 */
import type { Command } from "commander";
import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import { collect } from "./context.js";

export interface ContainerFlags {
  in?: string;
  network?: string;
  mount?: string;
  cpus?: string;
  memory?: string;
  passEnv?: string[];
}

export function containerOptions(cmd: Command): Command {
  return cmd
    .option(
      "--in <container[:image]>",
      "run the child in a container of its own (Docker or Podman; default image muster-agent:latest, made by muster image build); only its working directory is mounted, read-only",
    )
    .option(
      "--network <name>",
      "with --in: none, default (the engine's), host, or a network's name (default: none for the mock agent, else default)",
    )
    .option("--mount <mode>", "with --in: how the working directory is mounted: ro (default), rw or none")
    .option("--cpus <n>", "with --in: the container's CPU limit")
    .option("--memory <size>", "with --in: the container's memory limit (512m, 2g)")
    .option(
      "--pass-env <name>",
      "with --in: hand this variable of your environment to the child by name (repeatable)",
      collect,
    );
}

/** The container the flags ask for, or undefined; a shaping flag without --in is refused. */
export function containerFrom(flags: ContainerFlags): ContainerRequest | undefined {
  const shaping = (["network", "mount", "cpus", "memory", "passEnv"] as const).filter(
    (k) => flags[k] !== undefined,
  );
  if (flags.in === undefined) {
    if (shaping.length > 0)
      throw new MusterError(
        "invalid_argument",
        `--${shaping[0] === "passEnv" ? "pass-env" : shaping[0]} goes with --in container`,
      );
    return undefined;
  }
  const [kind, ...rest] = flags.in.split(":");
  if (kind !== "container")
    throw new MusterError("invalid_argument", `--in ${flags.in}: only container[:<image>] is known`);
  const image = rest.join(":");
  const cpus = flags.cpus !== undefined ? Number(flags.cpus) : undefined;
  if (cpus !== undefined && !Number.isFinite(cpus))
    throw new MusterError("invalid_argument", `--cpus ${flags.cpus} is not a number`);
  return {
    ...(image ? { image } : {}),
    ...(flags.network !== undefined ? { network: flags.network } : {}),
    ...(flags.mount !== undefined ? { mount: flags.mount as ContainerRequest["mount"] } : {}),
    ...(cpus !== undefined ? { cpus } : {}),
    ...(flags.memory !== undefined ? { memory: flags.memory } : {}),
    ...(flags.passEnv ? { env: flags.passEnv } : {}),
  };
}
