import type { ProviderError, Usage } from "../artifacts/events.js";

/** One message of a runner's output stream, normalised (muster's JSONL agent protocol, artifacts/README.md). */
export type AgentMessage =
  | { type: "text"; text: string }
  | { type: "tool"; phase: "start" | "end"; name: string; summary: string }
  | { type: "usage"; usage: Usage }
  | { type: "session"; id: string }
  | { type: "progress"; text: string }
  /** A permission asked for (pending), answered (granted) or refused (denied) → a `permission` event. */
  | { type: "permission"; state: "pending" | "granted" | "denied"; tool: string; summary?: string }
  /** The end of the turn as the agent reports it; `text` is the answer (the last reply, not the whole stream). */
  | {
      type: "result";
      status: "completed" | "errored" | "exhausted";
      text?: string;
      reason?: string;
      /** An errored turn's provider error, as the CLI reported it (a rate limit, a quota, …). */
      providerError?: ProviderError;
    }
  /** A line that is not protocol: shown in the pane, otherwise ignored. */
  | { type: "raw"; text: string };

export type StreamProtocol = "text" | "muster-jsonl";

/** What the child host knows when it starts a turn. */
export interface TurnInput {
  turnId: string;
  prompt: string;
  /** Absolute path of a file holding the exact prompt bytes. */
  promptFile: string;
  cwd: string;
  env: Record<string, string>;
  model?: string;
  reasoning?: string;
  systemPrompt?: string;
  /** The profile's command argv (command runner). */
  command?: string[];
  protocol?: StreamProtocol;
  /** The runner's own session id from the child's previous turn (native resume). */
  runnerSessionId?: string;
  /** A private folder of this child (artifacts/<child>/runner/) for files the CLI needs; never the user's config. */
  runnerDir: string;
  /** The profile's tool narrowing, in the CLI's own tool names. */
  tools?: string[];
  disallowedTools?: string[];
  maxTurns?: number;
  /** "ask": no pre-approval beyond the profile's tools; a live session routes the CLI's prompts to the parent. */
  permissions?: "ask";
  /** The profile's ACP session mode (`acpMode`), for runners that open ACP sessions of their own choosing. */
  acpMode?: string;
  /** A JSON Schema the final answer must match, for runners whose CLI enforces one (`Runner.nativeSchema`). */
  outputSchema?: object;
}

/** How a runner continues a conversation: its own session id, a transcript in the prompt, or not at all. */
export type ResumeMode = "native" | "transcript" | "none";

/** Reads one turn's stdout of an agent CLI, line by line, into muster messages (stateful, one per turn). */
export interface StreamParser {
  line(line: string): AgentMessage[];
  /** After the process exited: what the stream implied but never said (e.g. the final answer). */
  end?(exit: { code: number | null; signal: string | null }): AgentMessage[];
}

/** How to run one headless turn: an argv (never a shell string) and how to read its stdout. */
export interface TurnPlan {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  protocol: StreamProtocol;
  /** The CLI's own stream format; when present it reads stdout instead of `protocol`. */
  parser?: StreamParser;
  /** A file to give the CLI as stdin (a prompt too large for argv); default /dev/null. */
  stdinFile?: string;
  /**
   * The `result` message is the runner's last record and the session a next turn resumes is on disk by then:
   * the turn settles on it, and the process is reaped after (a next turn still waits for that).
   */
  settleOnResult?: boolean;
}

/**
 * A long-lived agent process for a child (runner mode `session`): one process across turns, each turn a prompt
 * over the protocol. Turns whose spec is the same share the process; a different one (another model) starts a
 * new process that reloads the conversation (`resume`).
 */
export interface SessionSpec<Options = unknown> {
  /** How muster talks to it: the Agent Client Protocol, Pi's RPC mode (`pi --mode rpc`), Claude's stream-json, Codex's app-server. */
  protocol: "acp" | "pi-rpc" | "claude-stream" | "codex-app";
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** The CLI's session to continue (from an earlier process of this child). */
  resume?: string;
  /** Arguments that make a new process continue `resume` (e.g. `--session <id>`): added only when one starts. */
  resumeArgs?: string[];
  /** false: a new process cannot reload the CLI's session (the turn after a restart runs one-shot, `--resume`). */
  reloads?: boolean;
  /** An ACP session mode to select once the session is open (e.g. one that needs no confirmations). */
  modeId?: string;
  /** ACP: the model and reasoning level to select among what the agent offers (a warning when it offers none). */
  model?: string;
  reasoning?: string;
  /** Instructions the first prompt of a new session carries (the profile's system prompt). */
  preamble?: string;
  /** Settings only this protocol's driver reads (Codex's app-server: its `CodexThread`). */
  options?: Options;
}

/** What a session driver may do with its process. */
export interface SessionIo {
  /** Writes one protocol line (with its LF) to the agent's stdin. */
  write(line: string): void;
  /** A line for the pane (not part of any answer). */
  info(text: string): void;
  /** The agent asks permission for a tool: the parent decides (see child/permissions.ts). */
  askPermission(tool: string, summary: string | undefined): Promise<"allow" | "allow_always" | "deny">;
  /** The session is open: what the agent offers and what of the spec it could not apply (recorded). */
  opened?(info: AgentSessionInfo): void;
}

/** What an agent offers for its session (ACP modes, models, reasoning levels) and the values in force. */
export interface AgentSessionInfo {
  modes?: string[];
  models?: string[];
  reasoningLevels?: string[];
  mode?: string;
  model?: string;
  reasoning?: string;
  /** Choices of the child's it could not apply (`--model` on an agent that offers no model choice). */
  warnings: string[];
}

/**
 * One long-lived agent protocol (ACP, Pi RPC) on one process: the child host's live session hands it the
 * process's stdout lines and asks it for a session, turns and interrupts.
 */
export interface SessionDriver {
  /** One stdout line; false when it is not protocol (the host shows it as is). */
  line(text: string): boolean;
  /** Opens the session (or reloads `spec.resume`); resolves with the CLI's own session id. */
  open(): Promise<string | undefined>;
  /**
   * Runs one turn: its messages go to `onMessage` as they arrive, the last a `result` (an error is an errored
   * result, never a rejection) unless the turn was interrupted; resolves once the agent has ended the turn.
   */
  prompt(text: string, onMessage: (m: AgentMessage) => void): Promise<void>;
  /** Asks the agent to end the running turn. */
  interrupt(): void;
  /** The process is gone: whatever is open ends with `why`. */
  close(why: Error): void;
}

/** The program a runner drives: found on PATH, or at the path in `envVar`. */
export interface RunnerBinary {
  command: string;
  /** e.g. MUSTER_CLAUDE_BIN: an explicit path wins over PATH. */
  envVar: string;
  /** How to get it, for the error when it is missing. */
  install: string;
  /** The npm package and the version muster's e2e tests run against (scripts/install-clis.mjs installs it). */
  tested?: { pkg: string; version: string };
}

/** One model a runner knows, with the reasoning levels known to be valid for it. */
export interface ModelInfo {
  /** `provider:model`, the form muster records on every turn. */
  id: string;
  reasoning: string[];
  defaultReasoning?: string;
}

/** The models a runner accepts; user config `models` entries add to it. */
export interface ModelCatalog {
  provider: string;
  /** Accepts ids it does not list (validation is then left to the agent CLI). */
  open: boolean;
  defaultModel?: string;
  models: ModelInfo[];
  /** Reasoning levels the CLI accepts for a model it does not list (open catalogs); absent: not checked. */
  reasoning?: string[];
}

export interface Runner {
  readonly name: string;
  readonly description: string;
  /** Known models and reasoning levels; absent means any model spelling is passed through. */
  readonly catalog?: ModelCatalog;
  /** How later turns continue the conversation (default "none"); may depend on the profile's protocol. */
  resumeMode?(protocol: StreamProtocol | undefined): ResumeMode;
  /** The agent CLI this runner drives (absent for runners that bring their own program). */
  readonly binary?: RunnerBinary;
  /** Profile fields the CLI has no way to honour: a spawn that sets one gets a warning, not a silent no-op. */
  readonly ignores?: readonly ("tools" | "disallowedTools" | "maxTurns")[];
  /** Its session mode hands the CLI's permission prompts to the parent (a profile's `permissions: ask`). */
  readonly routesPermissions?: boolean;
  /** It selects the profile's `acpMode` in the ACP sessions it opens (elsewhere that field is a spawn warning). */
  readonly acpModes?: boolean;
  /**
   * Whether the CLI enforces this JSON Schema on its final answer itself (structured output): the turn then
   * carries it as `outputSchema`. Absent or false: muster asks for the format in the prompt instead.
   */
  nativeSchema?(schema: object): boolean;
  /** The exact argv shape of one turn, for docs and `muster agents` (placeholders in angle brackets). */
  readonly usage?: string;
  plan(input: TurnInput): TurnPlan;
  /** The long-lived mode of the CLI, when it has one that can honour `input` (else turns run one-shot). */
  session?(input: TurnInput): SessionSpec | undefined;
}
