/**
 * Every MUSTER_* environment setting, once: its name, config-file key, default, type, who it is handed to,
 * and its one-line doc. Between machines the environment is the handover, so the lists that forward
 * settings (MCP install, popups, a child's environment) and the environment table in
 * docs/state-and-environment.md are all made from this.
 */

export type SettingType =
  | { kind: "number"; integer?: true; min: number; minExclusive?: true }
  | { kind: "boolean" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "path" }
  | { kind: "string"; pattern?: RegExp; expected?: string };

/** Where a setting is handed on, each with its reason. */
export interface Forwarding {
  /** In the environment a place (local now, remote later) hands a new child (handoverEnv). */
  child: boolean;
  /** By name into an MCP client's server entry (`muster mcp install`). */
  mcp: boolean;
  /** Into a popup's command (`muster top` in a popup runs with the multiplexer server's environment). */
  popup: boolean;
  /** Why, in one line. */
  why: string;
}

export interface SettingSpec {
  env: `MUSTER_${string}`;
  /** Its key in ~/.config/muster/config.json, where the config file has one (env wins over it). */
  config?: string;
  default?: string | number | boolean;
  /** The default in words where it is computed (the docs' table, doctor). */
  defaultDoc?: string;
  type: SettingType;
  forward: Forwarding;
  /** muster sets it in every child's pane (its lineage); a user rarely sets it. */
  setByMuster?: true;
  /** A test or internal knob: not in the docs' environment table. */
  internal?: true;
  /** What happens to a bad value, where it is not just ignored (doctor's line says it). */
  onBad?: string;
  /** Can hold a secret: doctor never prints its value. */
  secret?: true;
  doc: string;
}

const path = { kind: "path" } as const;
const text = { kind: "string" } as const;
const bool = { kind: "boolean" } as const;
const count = { kind: "number", integer: true, min: 1 } as const;
const seconds = { kind: "number", min: 0, minExclusive: true } as const;

// Everything a muster process reads to find state and panes: the same wherever muster runs for this user.
const everywhere = (why: string): Forwarding => ({ child: true, mcp: true, popup: true, why });
// What shapes the children a process starts: a popup (top) starts none and answers no permission request.
const spawning = (why: string): Forwarding => ({ child: true, mcp: true, popup: false, why });
const binary = (cli: string) =>
  ({
    env: `MUSTER_${cli.toUpperCase()}_BIN`,
    type: path,
    forward: spawning("children and an MCP server start agents with it; top starts none"),
    defaultDoc: `\`${cli}\` from PATH`,
    doc: `the ${cli} CLI's binary (an explicit path wins over PATH)`,
  }) as const satisfies SettingSpec;

export const SETTINGS = {
  home: {
    env: "MUSTER_HOME",
    type: path,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expression, shown as it is
    defaultDoc: "`${XDG_STATE_HOME:-~/.local/state}/muster`",
    forward: everywhere("every muster process of this user must read and write the same state"),
    doc: "state root (a relative path is taken from the working directory); dirs 0700, files 0600",
  },
  tmuxSocket: {
    env: "MUSTER_TMUX_SOCKET",
    type: text,
    forward: everywhere("panes live on that tmux server: whoever starts or finds them needs its name"),
    doc: "put every pane on a private tmux server (`tmux -L <name>`); the tests use it",
  },
  tmuxBin: {
    env: "MUSTER_TMUX_BIN",
    type: path,
    default: "tmux",
    forward: everywhere("the tmux that runs the panes, for whoever drives them"),
    doc: "the tmux binary (a bare name is looked up on PATH)",
  },
  backend: {
    env: "MUSTER_BACKEND",
    type: text,
    defaultDoc: "`tmux`; `zellij` inside Zellij; `pty` when neither is on PATH",
    forward: everywhere("new children (of a child, an MCP server, top) start in the backend the user chose"),
    doc: "where new children run (`spawn --backend <name>` for one child); each child keeps the backend it started in",
  },
  place: {
    env: "MUSTER_PLACE",
    type: text,
    default: "local",
    forward: everywhere("new children (of a child, an MCP server, a workflow) start where the user chose"),
    doc: "where new children's hosts run: `local` (this machine) or a place a module registered, as `<kind>:<target>` (`spawn --place <name>` for one child); each child keeps the place it started in",
  },
  containerEngine: {
    env: "MUSTER_CONTAINER_ENGINE",
    config: "containerEngine",
    type: text,
    defaultDoc: "`docker` when on PATH, else `podman`",
    forward: everywhere("a container child is reached through the engine it was made with"),
    doc: "the container engine's CLI for `spawn --in container` (`docker`, `podman` or a path to either); `DOCKER_HOST` / `CONTAINER_HOST` choose its daemon, a remote one (`ssh://`) included",
  },
  k8sImage: {
    env: "MUSTER_K8S_IMAGE",
    config: "k8sImage",
    type: text,
    default: "muster-agent:latest",
    forward: everywhere("a child's Pod runs the image the user chose, whoever spawns it"),
    doc: "the image of a child's Pod (`spawn --on k8s[:<context>]`): one with node 20+, tmux and the agent CLIs, where the cluster pulls from (`muster image build` makes one)",
  },
  backendModule: {
    env: "MUSTER_BACKEND_MODULE",
    type: text,
    forward: everywhere("a child of that backend is reached only where its module is loaded"),
    doc: "an `.mjs` file (several: `:`-separated) exporting `register(api)` that adds a backend with `api.registerBackend(name, factory)` or a place with `api.registerPlace(kind, factory)`; every muster call that touches its children needs it set",
  },
  zellijSession: {
    env: "MUSTER_ZELLIJ_SESSION",
    type: text,
    default: "muster",
    forward: everywhere("the Zellij session the panes are in, for whoever drives them"),
    doc: "the `zellij` backend's detached session outside Zellij",
  },
  zellijBin: {
    env: "MUSTER_ZELLIJ_BIN",
    type: path,
    default: "zellij",
    forward: everywhere("the zellij that runs the panes, for whoever drives them"),
    doc: "the zellij binary (a bare name is looked up on PATH)",
  },
  detachKey: {
    env: "MUSTER_DETACH_KEY",
    type: { kind: "string", pattern: /^\s*(?:(?:\^|C-).|.)\s*$/i, expected: "a key like ^\\ or C-]" },
    defaultDoc: "`^\\`, i.e. `Ctrl-\\`",
    onBad: "`muster attach` refuses to start",
    forward: {
      child: true,
      mcp: false,
      popup: false,
      why: "read by `muster attach` in a terminal the user types in (a child's pane may run it); an MCP server or top attaches nothing",
    },
    doc: "the key that detaches `muster attach` from a pty child (e.g. `^]`)",
  },
  primary: {
    env: "MUSTER_PRIMARY",
    type: text,
    defaultDoc: "this repository's or directory's",
    setByMuster: true,
    forward: {
      child: false,
      mcp: true,
      popup: true,
      why: "set per child by its host; an MCP server (by name) and top act for the primary of the shell they start from",
    },
    doc: "act for this primary (set inside every child's pane, so grandchildren belong to the same family)",
  },
  childId: {
    env: "MUSTER_CHILD_ID",
    type: text,
    setByMuster: true,
    forward: {
      child: false,
      mcp: true,
      popup: false,
      why: "set per child by its host; an MCP server in a child's agent (by name) spawns that child's children; top supervises the whole tree",
    },
    doc: "set by muster in a child's pane: the child's id (`spawn --fork $MUSTER_CHILD_ID` hands over your own conversation)",
  },
  depth: {
    env: "MUSTER_DEPTH",
    type: { kind: "number", integer: true, min: 0 },
    setByMuster: true,
    forward: {
      child: false,
      mcp: true,
      popup: false,
      why: "set per child by its host; an MCP server in a child's agent (by name) counts its children's level from it",
    },
    doc: "set by muster in a child's pane: its level below the primary (0: a primary's direct child)",
  },
  artifactDir: {
    env: "MUSTER_ARTIFACT_DIR",
    type: path,
    setByMuster: true,
    forward: {
      child: false,
      mcp: false,
      popup: false,
      why: "set per child by its host for `muster ask` / `done` in its pane; no MCP tool acts as the child",
    },
    doc: "set by muster in a child's pane: the child's artifact folder (`muster ask`, `progress`, `done`, `error` work only there)",
  },
  worktree: {
    env: "MUSTER_WORKTREE",
    type: path,
    setByMuster: true,
    forward: {
      child: false,
      mcp: false,
      popup: false,
      why: "set for a checkout's worktree set-up only, naming the worktree made for one child",
    },
    doc: "set by muster for a checkout's `.muster/worktree-setup`: the top of the new worktree it runs in (its working directory)",
  },
  mcpSessionIdleMs: {
    env: "MUSTER_MCP_SESSION_IDLE_MS",
    type: { kind: "number", integer: true, min: 100 },
    default: 1_800_000,
    forward: {
      child: false,
      mcp: false,
      popup: false,
      why: "read by `muster mcp --http` itself, for its own clients' sessions",
    },
    doc: "`muster mcp --http` ends a client's session after this long (ms) with no request open and none made (a client that went away without ending it); the client starts a new one with `initialize`",
  },
  codeCache: {
    env: "MUSTER_CODE_CACHE",
    type: bool,
    default: true,
    forward: everywhere(
      "read by every `muster` command as it starts: one turned off is off for the whole tree",
    ),
    doc: "`0`: the CLI compiles its commands at every start instead of keeping V8's code for them in `$XDG_CACHE_HOME/muster/code-cache` (else `~/.cache/…`), a file per build and Node version, pruned after a week",
  },
  mcpToken: {
    env: "MUSTER_MCP_TOKEN",
    type: text,
    secret: true,
    forward: {
      child: false,
      mcp: false,
      popup: false,
      why: "read by the parent's MCP client for the HTTP server's token, never by muster: no child needs it",
    },
    doc: "the variable an HTTP install (`muster mcp install <client> --url`) names by default: the parent's client sends its value as `Authorization: Bearer`; muster never reads it",
  },
  noSpawn: {
    env: "MUSTER_NO_SPAWN",
    type: bool,
    default: false,
    setByMuster: true,
    forward: {
      child: true,
      mcp: true,
      popup: false,
      why: "a ban carries down the tree (a no-spawn profile's child gets it too); top spawns nothing",
    },
    doc: "`1`: this process may not spawn children (set for a profile with `spawn: false`)",
  },
  agent: {
    env: "MUSTER_AGENT",
    type: text,
    default: "mock",
    forward: spawning("the default agent of a child's or an MCP server's new children"),
    doc: "default `--agent` (and `subagents_run`'s `agent`)",
  },
  model: {
    env: "MUSTER_MODEL",
    config: "model",
    type: text,
    defaultDoc: "the runner's",
    forward: spawning("the primary's default model, for every child started on its behalf"),
    doc: "the primary's default model",
  },
  reasoning: {
    env: "MUSTER_REASONING",
    config: "reasoning",
    type: text,
    defaultDoc: "the model's",
    forward: spawning("the primary's default reasoning, for every child started on its behalf"),
    doc: "the primary's default reasoning level",
  },
  compatAgents: {
    env: "MUSTER_COMPAT_AGENTS",
    config: "compatAgents",
    type: bool,
    default: true,
    forward: spawning("which agent profiles a spawning process finds"),
    doc: "`0` to ignore other harnesses' agent folders (`.claude/agents`, …)",
  },
  runnerMode: {
    env: "MUSTER_RUNNER_MODE",
    type: { kind: "enum", values: ["session", "oneshot"] },
    default: "session",
    forward: spawning("read by each child's host: children of a child or an MCP server run the same way"),
    doc: "`oneshot`: a process per turn instead of a live session (a profile's `mode` wins)",
  },
  maxRunning: {
    env: "MUSTER_MAX_RUNNING",
    config: "maxRunning",
    type: count,
    default: 4,
    forward: spawning("every child host takes a run slot under the same limit"),
    doc: "turns running at once across the primary; more wait for a slot",
  },
  maxDepth: {
    env: "MUSTER_MAX_DEPTH",
    config: "maxDepth",
    type: count,
    default: 8,
    forward: spawning("every spawning process checks the same limit"),
    doc: "levels of children below the primary",
  },
  maxLive: {
    env: "MUSTER_MAX_LIVE",
    config: "maxLiveNodes",
    type: count,
    default: 256,
    forward: spawning("every spawning process checks the same limit"),
    doc: "children alive at once per primary",
  },
  stallSeconds: {
    env: "MUSTER_STALL_SECONDS",
    config: "stallSeconds",
    type: seconds,
    default: 60,
    forward: everywhere("`stalled` must mean the same in ls, an MCP server's status and top"),
    doc: "a turn with no event for this long shows `stalled`",
  },
  unreachableSeconds: {
    env: "MUSTER_UNREACHABLE_SECONDS",
    config: "unreachableSeconds",
    type: seconds,
    default: 60,
    forward: everywhere("a wait anywhere gives up on an unreachable place after the same time"),
    doc: "a wait gives up on a child whose place (an SSH host) has not answered for this long: `lost`, not delivered",
  },
  worktreeSetupSeconds: {
    env: "MUSTER_WORKTREE_SETUP_SECONDS",
    config: "worktreeSetupSeconds",
    type: seconds,
    default: 300,
    forward: spawning("a child that spawns isolated children bounds their set-up as its parent does"),
    doc: "how long a checkout's `.muster/worktree-setup` may run in a new worktree before the spawn is refused",
  },
  permissionTimeout: {
    env: "MUSTER_PERMISSION_TIMEOUT",
    type: seconds,
    default: 600,
    forward: spawning("read by each child's host, so children of a child or an MCP server wait as long"),
    doc: "seconds an agent's permission request waits for an answer before it is denied",
  },
  claudeBin: binary("claude"),
  codexBin: binary("codex"),
  geminiBin: binary("gemini"),
  opencodeBin: binary("opencode"),
  piBin: binary("pi"),
  aiderBin: binary("aider"),
  debug: {
    env: "MUSTER_DEBUG",
    type: bool,
    default: false,
    forward: everywhere("a stack trace is wanted from whichever muster process failed"),
    doc: "`1`: an unexpected error prints its stack trace",
  },
  tuiSlowStartMs: {
    env: "MUSTER_TUI_SLOW_START_MS",
    type: { kind: "number", min: 0, minExclusive: true },
    default: 30_000,
    forward: spawning("read by each child's host"),
    doc: "a TUI child not ready this long (ms) gets a progress record saying so",
  },
  tuiReadyTimeoutMs: {
    env: "MUSTER_TUI_READY_TIMEOUT_MS",
    type: { kind: "number", min: 0, minExclusive: true },
    default: 600_000,
    forward: spawning("read by each child's host"),
    doc: "a prompt sent to a TUI child that does not take it this long (ms: still starting, a dialog nobody answered) ends its turn errored",
  },
  tuiSubmitTimeoutMs: {
    env: "MUSTER_TUI_SUBMIT_TIMEOUT_MS",
    type: { kind: "number", min: 0, minExclusive: true },
    default: 60_000,
    internal: true,
    forward: { child: true, mcp: false, popup: false, why: "a test knob read by each child's host" },
    doc: "how long (ms) a TUI child's start record may take after muster's Enter before the turn ends errored",
  },
  tuiHookFile: {
    env: "MUSTER_TUI_HOOK_FILE",
    type: path,
    internal: true,
    forward: {
      child: false,
      mcp: false,
      popup: false,
      why: "set by a child's host for its agent's plugin, one file per child",
    },
    doc: "where a TUI agent's muster plugin writes its turn boundaries",
  },
  webHeartbeatMs: {
    env: "MUSTER_WEB_HEARTBEAT_MS",
    type: { kind: "number", integer: true, min: 50 },
    default: 30_000,
    internal: true,
    forward: { child: false, mcp: false, popup: false, why: "a test knob read by `muster web` itself" },
    doc: "how often (ms) `muster web` pings each live terminal's socket; one that missed the last ping is closed and its viewer ended",
  },
  hostPollMs: {
    env: "MUSTER_HOST_POLL_MS",
    type: { kind: "number", integer: true, min: 50 },
    default: 2000,
    internal: true,
    forward: { child: true, mcp: false, popup: false, why: "a test knob read by each child's host" },
    doc: "a child host's safety poll of its inbox (ms); a test sets it far out to prove a poke alone wakes it",
  },
} as const satisfies Record<string, SettingSpec>;

export type SettingKey = keyof typeof SETTINGS;
export const SETTING_KEYS = Object.keys(SETTINGS) as SettingKey[];

/** Each setting's variable name by key, e.g. ENV.childId === "MUSTER_CHILD_ID". */
export const ENV = Object.fromEntries(SETTING_KEYS.map((k) => [k, SETTINGS[k].env])) as {
  [K in SettingKey]: (typeof SETTINGS)[K]["env"];
};
