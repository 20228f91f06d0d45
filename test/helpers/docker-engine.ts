/**
 * A real, private Docker engine (dockerd and its containerd under a temp folder, unix socket only, no bridge,
 * no iptables; root only) and a base image from this machine's own files, typed for the tests.
 * The implementation is test/fixtures/docker-engine.mjs, plain JS so the benchmark can start an engine too.
 */
import * as impl from "../fixtures/docker-engine.mjs";

export interface DockerEngine {
  /** The daemon's address, `unix://<base>/docker.sock`. */
  host: string;
  /** What a `docker` client needs to reach this engine (DOCKER_CONFIG: a private client config folder). */
  env: { DOCKER_HOST: string; DOCKER_CONFIG: string };
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

export interface BaseImage {
  tag: string;
  /** The content key of the staged files (also the image's MUSTER_BASE_KEY). */
  key: string;
  /** The cached root file system tarball the image was imported from. */
  tarball: string;
  tarBytes: number;
  /** The image's size as the engine reports it. */
  imageBytes: number;
  /** Whether this call wrote the tarball (false: it came from the cache). */
  staged: boolean;
  /** Whether this call imported it (false: the engine already had this content as `tag`). */
  imported: boolean;
  ms: number;
}

/** Whether this machine can run a private engine (root, dockerd, containerd, runc, docker-init, docker). */
export const dockerAvailable: () => { ok: true } | { ok: false; why: string } = impl.dockerAvailable;

/** Starts a private dockerd with everything under `base` (a short temp folder of the test) once it answers. */
export const startDockerEngine: (base: string, opts?: { readyTimeoutMs?: number }) => Promise<DockerEngine> =
  impl.startDockerEngine;

/** Makes image `tag` from this machine's node, tmux, shell, coreutils, terminfo and C.UTF-8 locale (cached). */
export const buildBaseImage: (
  engine: DockerEngine,
  tag: string,
  opts?: { cacheDir?: string; extraBins?: string[] },
) => BaseImage = impl.buildBaseImage;

/** Mount points at or under `dir` in this process's mount namespace, deepest first. */
export const mountsUnder: (dir: string) => string[] = impl.mountsUnder;

/** Processes whose command line names `base` (a daemon, containerd, a shim), or in a cgroup of `containerIds`. */
export const enginePids: (base: string, containerIds?: string[]) => number[] = impl.enginePids;
