/**
 * What a child's container is made of: the image, its network, how the working directory is mounted, extra
 * mounts, limits, the variables passed by name and the agent config folders mounted read-only. A request
 * comes from `spawn --in container[:image]`, MCP `container`, a workflow step or a profile's `container:`;
 * the call's fields win over the profile's. The resolved spec is kept under the state root
 * (`containers/<child id>.json`) so every later muster process makes the same place for the child.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { ContainerRequest } from "../../base/container-request.js";
import { MusterError } from "../../base/errors.js";
import { keptSpecs } from "../far/kept-spec.js";

export type { ContainerRequest } from "../../base/container-request.js";

/** The image a request that names none runs (`muster image build` makes it). */
export const DEFAULT_IMAGE = "muster-agent:latest";

export interface ContainerSpec {
  image: string;
  /** `none`, `default` (the engine's own), `host`, a network the engine has, or `container:<name>`. */
  network: string;
  /** How the working directory is mounted (children isolated in a worktree get none: theirs comes as a bundle). */
  mount: "ro" | "rw" | "none";
  /** The working directory here, mounted at the same path there. */
  workdir: string;
  /** Extra bind mounts `<here>:<there>[:ro|:rw]` (absolute paths). */
  mounts: string[];
  cpus?: number;
  memory?: string;
  /** Variables of the caller's environment handed to the child by name. */
  env: string[];
  /** Agent config folders (under the home folder here) mounted read-only at the same place under the container's. */
  config: string[];
}

const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$/;
// A network's name, or `container:<name>`: another container's network (a sidecar that holds the only way out).
const NETWORK = /^(container:)?[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const MEMORY = /^[0-9]+(\.[0-9]+)?[bkmgBKMG]?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const bad = (what: string, v: unknown, expected: string): MusterError =>
  new MusterError(
    "invalid_argument",
    `container ${what} ${JSON.stringify(v).slice(0, 80)} is not ${expected}`,
  );

/** One bind mount as given, checked: absolute paths with no `:` or newline in them, a mode of ro or rw. */
function checkMount(m: unknown): string {
  if (typeof m !== "string") throw bad("mount", m, "<here>:<there>[:ro|:rw]");
  const parts = m.split(":");
  const [here, there, mode] = parts;
  if (
    parts.length < 2 ||
    parts.length > 3 ||
    !here ||
    !there ||
    !path.isAbsolute(here) ||
    !path.posix.isAbsolute(there) ||
    (mode !== undefined && mode !== "ro" && mode !== "rw") ||
    /[\n\r,]/.test(m)
  )
    throw bad("mount", m, "<absolute here>:<absolute there>[:ro|:rw]");
  return m;
}

/**
 * The spec a request and a profile's `container:` give, for a runner (`mock` needs no model API, so its
 * default network is none; every other runner gets the engine's default network unless told).
 */
export function resolveSpec(
  req: ContainerRequest,
  profile: ContainerRequest | undefined,
  opts: { runner: string; worktree: boolean; workdir: string },
): ContainerSpec {
  const r = { ...profile, ...req };
  const image = r.image ?? DEFAULT_IMAGE;
  if (!IMAGE.test(image)) throw bad("image", image, "an image name (name[:tag] or name@digest)");
  const network = r.network ?? (opts.runner === "mock" ? "none" : "default");
  if (!NETWORK.test(network))
    throw bad("network", network, "none, default, host, a network's name or container:<name>");
  const mount = opts.worktree ? "none" : (r.mount ?? "ro");
  if (mount !== "ro" && mount !== "rw" && mount !== "none") throw bad("mount", mount, "ro, rw or none");
  if (r.cpus !== undefined && !(typeof r.cpus === "number" && r.cpus > 0 && r.cpus <= 1024))
    throw bad("cpus", r.cpus, "a number of CPUs above 0");
  if (r.memory !== undefined && !(typeof r.memory === "string" && MEMORY.test(r.memory)))
    throw bad("memory", r.memory, "a size such as 512m or 2g");
  for (const n of r.env ?? []) if (!ENV_NAME.test(n)) throw bad("env name", n, "a variable's name");
  const home = os.homedir();
  const config = (r.config ?? []).map((c) => {
    const abs = path.resolve(home, c.replace(/^~(?=$|\/)/, home));
    if (abs === home || !abs.startsWith(`${home}${path.sep}`))
      throw bad("config folder", c, `a folder under your home folder (${home})`);
    if (!fs.statSync(abs, { throwIfNoEntry: false })?.isDirectory())
      throw new MusterError("invalid_argument", `container config folder ${abs} does not exist`);
    return abs;
  });
  return {
    image,
    network,
    mount,
    workdir: opts.workdir,
    mounts: (r.mounts ?? []).map(checkMount),
    ...(r.cpus !== undefined ? { cpus: r.cpus } : {}),
    ...(r.memory !== undefined ? { memory: r.memory } : {}),
    env: [...new Set(r.env ?? [])],
    config,
  };
}

/** Each child's container spec, kept under the state root (`containers/<child id>.json`). */
export const containerSpecs = keptSpecs<ContainerSpec>("containers", "container");
