import type { Usage } from "../artifacts/events.js";

/** One message of a runner's output stream, normalised (muster's JSONL agent protocol, artifacts/README.md). */
export type AgentMessage =
  | { type: "text"; text: string }
  | { type: "tool"; phase: "start" | "end"; name: string; summary: string }
  | { type: "usage"; usage: Usage }
  | { type: "session"; id: string }
  | { type: "progress"; text: string }
  | { type: "result"; status: "completed" | "errored"; text?: string }
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
}

/** How a runner continues a conversation: its own session id, a transcript in the prompt, or not at all. */
export type ResumeMode = "native" | "transcript" | "none";

/** How to run one headless turn: an argv (never a shell string) and how to read its stdout. */
export interface TurnPlan {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  protocol: StreamProtocol;
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
}

export interface Runner {
  readonly name: string;
  readonly description: string;
  /** Known models and reasoning levels; absent means any model spelling is passed through. */
  readonly catalog?: ModelCatalog;
  /** How later turns continue the conversation (default "none"); may depend on the profile's protocol. */
  resumeMode?(protocol: StreamProtocol | undefined): ResumeMode;
  plan(input: TurnInput): TurnPlan;
}
