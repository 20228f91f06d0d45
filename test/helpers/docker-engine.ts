/**
 * A real, private Docker engine (dockerd and its containerd under a temp folder, unix socket only, no bridge,
 * no iptables; root only), or private Podman storage, typed for the tests.
 * The implementation is test/fixtures/docker-engine.mjs, plain JS so the benchmark can start an engine too.
 */
import * as impl from "../fixtures/docker-engine.mjs";
import * as podman from "../fixtures/podman-engine.mjs";

export interface DockerEngine {
  /** The daemon's address, `unix://<base>/docker.sock`. */
  host: string;
  /**
   * What muster needs to reach this engine: DOCKER_HOST and DOCKER_CONFIG (a private client config folder)
   * for Docker, MUSTER_CONTAINER_ENGINE (the wrapper) for Podman.
   */
  env: Record<string, string>;
  /** The `docker` client the helpers run. */
  cli: string;
  /** The daemon's process id. */
  pid: number;
  /** How long the daemon took to answer `docker version`. */
  startMs: number;
  /** Runs the client on argv against this engine; returns stdout, throws with stderr on a non-zero exit. */
  docker(argv: string[], opts?: { input?: string | Buffer; timeoutMs?: number }): string;
  /** The same without blocking this process. */
  dockerAsync(argv: string[], opts?: { timeoutMs?: number }): Promise<string>;
  /**
   * Removes the containers (or keeps them, stopped, for a restart: startDockerEngine on the same folder finds
   * them), stops the daemon, its containerd and the shims (SIGKILL after a bound), unmounts.
   */
  stop(how?: { keepContainers?: boolean }): Promise<void>;
}

/** Whether this machine can run private Podman storage (root, podman, runc, conmon, catatonit). */
export const podmanAvailable: () => { ok: true } | { ok: false; why: string } = podman.podmanAvailable;

/**
 * Podman with its storage and a containers.conf under `base` (runc, cgroupfs, no network by default), reached
 * through a `podman` wrapper there that `env.MUSTER_CONTAINER_ENGINE` names; `docker` runs that wrapper.
 */
export const startPodmanEngine: (base: string) => Promise<DockerEngine> = podman.startPodmanEngine;

/** Whether this machine can run a private engine (root, dockerd, containerd, runc, docker-init, docker). */
export const dockerAvailable: () => { ok: true } | { ok: false; why: string } = impl.dockerAvailable;

/** Starts a private dockerd with everything under `base` (a short temp folder of the test) once it answers. */
export const startDockerEngine: (
  base: string,
  opts?: { readyTimeoutMs?: number; wrap?: string[] },
) => Promise<DockerEngine> = impl.startDockerEngine;

/** Mount points at or under `dir` in this process's mount namespace, deepest first. */
export const mountsUnder: (dir: string) => string[] = impl.mountsUnder;

/** Processes whose command line names `base` (a daemon, containerd, a shim), or in a cgroup of `containerIds`. */
export const enginePids: (base: string, containerIds?: string[]) => number[] = impl.enginePids;

/** Each engine the container tests run under, whether this machine can run it, and how to start a private one. */
export const CONTAINER_ENGINES = [
  { kind: "docker", available: dockerAvailable(), start: (base: string) => startDockerEngine(base) },
  { kind: "podman", available: podmanAvailable(), start: startPodmanEngine },
] as const;
