/**
 * A child's container as a caller asks for it (`spawn --in container[:image]`, MCP `container`, a workflow
 * step's `container`, a profile's `container:`), before place/container/spec.ts checks and completes it.
 * Plain data, so the core, profiles and front ends share it without importing a place.
 */
export interface ContainerRequest {
  /** The image (default `muster-agent:latest`, what `muster image build` makes). */
  image?: string;
  /** `none`, `default` (the engine's own), `host`, a network's name, or `container:<name>` (another's). */
  network?: string;
  /** How the working directory is mounted when the child has no worktree: `ro` (default), `rw` or `none`. */
  mount?: "ro" | "rw" | "none";
  /** Extra bind mounts, `<here>:<there>[:ro|:rw]`. */
  mounts?: string[];
  cpus?: number;
  /** A size: `512m`, `2g`. */
  memory?: string;
  /** Variables of the caller's environment handed to the child by name (never their values in argv). */
  env?: string[];
  /** Agent config folders under the home folder, mounted read-only (`~/.claude`). */
  config?: string[];
}
