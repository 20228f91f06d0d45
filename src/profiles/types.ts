import type { Caps } from "../artifacts/events.js";
import type { RestartPolicy } from "../artifacts/restart.js";
import type { ContainerRequest } from "../base/container-request.js";
import type { PodRequest } from "../base/pod-request.js";
import type { VerifyRequest } from "../base/verify-request.js";
import type { StreamProtocol } from "../runners/types.js";

/** Which harness's frontmatter a profile file was read as. */
export type ProfileFormat = "muster" | "claude" | "pi" | "opencode";

/** Where a profile file was found, lowest precedence first (see LAYER_ORDER). */
export type ProfileLayer = "bundled" | "compat-user" | "compat-project" | "user" | "project";

/** Layers from lowest to highest precedence. */
export const LAYER_ORDER: readonly ProfileLayer[] = [
  "bundled",
  "compat-user",
  "compat-project",
  "user",
  "project",
];

/** An agent definition: Markdown body (system prompt) + YAML frontmatter. */
export interface Profile {
  name: string;
  description: string;
  runner: string;
  /** As written (muster files) or translated to `provider:model` (compat files); validated against a catalog at spawn. */
  model?: string;
  reasoning?: string;
  /** Tools the agent may use, in the runner's own names (interpreted by the runner). */
  tools?: string[];
  /** Tools the agent must not use (Claude Code `disallowedTools`, OpenCode `tools: {x: false}`). */
  disallowedTools?: string[];
  /** How the agent CLI runs: `session` (one long-lived process, where the CLI has one), `oneshot` (a process a
   * turn), `headless` (the default: session where available), `tui` (not yet). */
  mode?: "headless" | "session" | "oneshot" | "tui";
  /** "worktree": each child runs in a git worktree of its own (see src/isolation). */
  isolation?: "none" | "worktree";
  /** The SSH host(s) its children run on (`muster hosts add`): one, `any`, or a list to choose from. */
  on?: string[];
  /** Its children run each in a container of their own (place/container/): the image, network, mounts, limits. */
  container?: ContainerRequest;
  /** Every turn's answer must pass this check (a command run where the child works), with corrections. */
  verify?: VerifyRequest;
  /** Its children run each in a Kubernetes Pod of its own (place/k8s/): where, the image, resources. */
  k8s?: PodRequest;
  /** Working directory for the child, as written (relative paths are the caller's to resolve). */
  cwd?: string;
  env?: Record<string, string>;
  maxTurns?: number;
  /** "ask": tools the profile does not pre-approve are asked of the parent (permission requests); default
   * "allow": the CLI runs in its no-prompt mode. */
  permissions?: "allow" | "ask";
  /** Caps muster enforces on this agent's children (the `caps:` map; maxTurns there counts muster turns). */
  caps?: Caps;
  /** `restart: on-lost[:N]`: a turn of its children whose host or agent dies is restarted (artifacts/restart.ts). */
  restart?: RestartPolicy;
  /** false: this agent's children may not start children of their own. */
  spawn?: boolean;
  command?: string[];
  protocol?: StreamProtocol;
  /** The session mode an ACP agent starts in (runner acp), one of the modes it offers (`muster status` lists them). */
  acpMode?: string;
  systemPrompt: string;
  /** The file it came from. */
  source: string;
  /** The frontmatter dialect it was read as (absent means muster). */
  format?: ProfileFormat;
  /** Problems with this file's fields, each naming the file and field; the profile still works. */
  warnings: string[];
}

/** A discovered profile: the winner for its name, with the layer it came from and the files it shadows. */
export interface ResolvedProfile extends Profile {
  layer: ProfileLayer;
  shadows: { source: string; layer: ProfileLayer }[];
}
