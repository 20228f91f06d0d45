/** The artifact protocol's event records (spec: artifacts/README.md, schemas: artifacts/schema/). */

import type { RestartPolicy } from "./restart.js";

export const PROTOCOL_VERSION = 1;

/** Terminal outcomes of a turn. */
export type CompletionStatus =
  | "completed"
  | "errored"
  | "cancelled"
  | "exhausted"
  | "incomplete"
  | "lost"
  /** The parent stopped the turn (`send --mode now|stop`); the child stays for its next turn. */
  | "interrupted"
  /** The agent answered, but the child's acceptance check (`--verify`) did not pass, retries included. */
  | "failed_verification";

export interface Usage {
  input: number;
  output: number;
  cost?: number;
}

/** What a provider's refusal means: a rate limit, an exhausted quota, a refused credential, an overloaded upstream. */
export type ProviderErrorKind = "rate_limit" | "quota" | "auth" | "overloaded";

/** A turn's provider error, read from its agent CLI's own structured output (runners/common/provider-error.ts). */
export interface ProviderError {
  kind: ProviderErrorKind;
  /** When the limit lifts, if the provider or the CLI said (ISO 8601). */
  resetAt?: string;
  /** The CLI's message, bounded. */
  message: string;
}

export interface OutputRef {
  /** Path relative to the artifact dir, e.g. `outputs/<eventId>.md`. */
  path: string;
  bytes: number;
  sha256: string;
}

export interface OutputError {
  code: "output_too_large" | "output_unreadable";
  message: string;
  bytes?: number;
}

interface Base {
  v: number;
  eventId: string;
  seq: number;
  /** ISO 8601 with milliseconds; display only, order is byte order. */
  ts: string;
}

export interface ChildStartedEvent extends Base {
  type: "child_started";
  pid: number;
  runner: string;
  /** Who started the host: the parent's spawn, or a later resume in a new pane. */
  by: "spawn" | "resume";
}

export interface TurnStartedEvent extends Base {
  type: "turn_started";
  turnId: string;
  /** Where the prompt came from: the inbox (muster send / spawn) or a line typed into the pane. */
  source: "inbox" | "typed";
  promptBytes: number;
  promptSha256: string;
  /** Path of the prompt file, relative to the artifact dir. */
  promptPath: string;
  model?: string;
  reasoning?: string;
}

export interface TurnQueuedEvent extends Base {
  type: "turn_queued";
  turnId: string;
  /** Turns running across the primary when this one had to wait, and the limit. */
  running: number;
  limit: number;
}

/** The turn waits because the tree is paused (a provider refused a turn of it: quota, credential). */
export interface TurnHeldEvent extends Base {
  type: "turn_held";
  turnId: string;
  kind: ProviderErrorKind;
  /** What the provider said, one line. */
  reason: string;
  /** When the pause lifts by itself, if known. */
  resetAt?: string;
}

/** The turn hit a rate limit that lifts soon: the host waits until `resetAt` and runs the turn again. */
export interface RateLimitedEvent extends Base {
  type: "rate_limited";
  turnId: string;
  resetAt: string;
  /** 1 for the first wait of this turn. */
  attempt: number;
  reason: string;
}

export interface RunnerStartedEvent extends Base {
  type: "runner_started";
  turnId: string;
  /** The runner's pid; it leads its own process group, so -pid addresses the whole group. */
  pid: number;
  argv0: string;
}

/**
 * A live agent session opened (ACP): the session modes, models and reasoning levels the agent offers, the
 * values in force, and the child's choices it could not apply (`--model` on an agent with no model choice).
 */
export interface AgentSessionEvent extends Base {
  type: "agent_session";
  turnId: string;
  modes?: string[];
  models?: string[];
  reasoningLevels?: string[];
  mode?: string;
  model?: string;
  reasoning?: string;
  warnings?: string[];
}

/** A runner that exited badly after its turn had settled on its final record (never changes the outcome). */
export interface RunnerExitedEvent extends Base {
  type: "runner_exited";
  turnId: string;
  pid: number;
  exitCode: number | null;
  signal: string | null;
  /** Killed by the host after the grace period, rather than exited on its own. */
  killed: boolean;
}

export interface ToolActivityEvent extends Base {
  type: "tool_activity";
  turnId: string;
  phase: "start" | "end";
  name: string;
  summary: string;
}

export interface UsageEvent extends Base {
  type: "usage";
  turnId: string;
  usage: Usage;
}

export interface ProgressEvent extends Base {
  type: "progress";
  turnId?: string;
  text: string;
}

/**
 * A runner reported a permission: asked and not answered yet (`pending`), answered (`granted`), or refused
 * (`denied`: headless runners refuse what the profile did not allow; the turn goes on without it); a request
 * routed to the parent whose turn was stopped before an answer is closed `cancelled` (`summary` says why).
 */
export interface PermissionEvent extends Base {
  type: "permission";
  turnId: string;
  state: "pending" | "granted" | "denied" | "cancelled";
  /** The tool (or action) the permission is for. */
  tool: string;
  summary?: string;
  /**
   * A request routed to the parent (a live session's agent asked): pending until a granted/denied event with
   * the same id; the parent answers with `muster allow|deny` or MCP `subagents_answer`.
   */
  requestId?: string;
  /** granted for the rest of the session (`muster allow --always`). */
  always?: boolean;
}

/** The agent asks its parent (`muster ask`) and waits: a pending request until an `answered` names it. */
export interface QuestionEvent extends Base {
  type: "question";
  turnId?: string;
  /** The request's id: what `muster answer <id>` names. */
  requestId: string;
  text: string;
  /** The answers offered, when the question has a fixed set. */
  choices?: string[];
}

/** A pending request (a question) is over: answered by a parent, or its asker stopped waiting. */
export interface AnsweredEvent extends Base {
  type: "answered";
  turnId?: string;
  requestId: string;
  /** answered: the asker got the parent's answer; timeout: it gave up waiting. */
  outcome: "answered" | "timeout";
  /** The answer, bounded (it is in answers/<requestId>.json whole). */
  text?: string;
}

export interface CompletionEvent extends Base {
  type: "completion";
  turnId: string;
  status: CompletionStatus;
  /** One line on why, e.g. "exit code 3", "cancelled by muster cancel", "child host vanished". */
  reason?: string;
  exitCode?: number | null;
  signal?: string | null;
  durationMs?: number;
  usage?: Usage;
  output?: OutputRef;
  outputError?: OutputError;
  /** The runner's own session id after this turn (what native resume continues). */
  runnerSessionId?: string;
  /** An agent that failed before the turn's prompt (its session did not open): its stderr until then, bounded. */
  stderr?: string;
  /** The turn failed on a provider error muster recognised (quota and auth pause the tree). */
  providerError?: ProviderError;
  /** The acceptance check's last run, for a child that has one (`--verify`) and a turn that reached it. */
  verified?: Verified;
  /** Who wrote it: the child host, or a parent that found the host dead. */
  by: "child" | "parent";
}

/**
 * A turn whose host or agent died is started again on the same conversation (its restart policy): the turn
 * keeps its id and is replayed with a note of what happened. `by`: a parent that found the host dead, or the
 * host whose agent died.
 */
export interface RestartedEvent extends Base {
  type: "restarted";
  turnId: string;
  /** Why the turn had to be restarted (how its host or agent died). */
  reason: string;
  /** 1 = the turn's first restart. */
  attempt: number;
  /** The policy's bound (`on-lost:N`). */
  max: number;
  by: "child" | "parent";
}

/** How a turn's acceptance check ended: its last run, and how many runs the turn took. */
export interface Verified {
  /** The check as the user gave it (a shell command line, or argv joined by spaces). */
  command: string;
  /** null: killed (its time bound, or the turn was stopped). */
  exitCode: number | null;
  signal?: string | null;
  durationMs: number;
  /** The end of its output (stdout and stderr together), bounded. */
  outputTail: string;
  /** Runs of the check in this turn: 1 + the corrective turns the agent was given. */
  attempts: number;
  timedOut?: boolean;
}

/** The child's acceptance check started on the agent's answer (one per attempt). */
export interface VerifyStartedEvent extends Base {
  type: "verify_started";
  turnId: string;
  attempt: number;
  command: string;
}

/** One run of the acceptance check ended; a failed one with attempts left sends the agent a corrective prompt. */
export interface VerifyFinishedEvent extends Base {
  type: "verify_finished";
  turnId: string;
  attempt: number;
  exitCode: number | null;
  signal?: string | null;
  durationMs: number;
  outputTail: string;
  timedOut?: boolean;
  /** The agent is sent the failure to fix (a corrective prompt in the same turn). */
  retrying: boolean;
}

export interface ChildExitedEvent extends Base {
  type: "child_exited";
  reason: "cancelled" | "lost" | "closed" | "error";
  detail?: string;
  by: "child" | "parent";
}

/**
 * What a new worktree got before the child's host started (isolation/setup.ts), written by the spawn as the
 * log's first record: the files `.muster/worktree-include` copied in, and the `.muster/worktree-setup` run
 * (only one that ended well: a failing one refuses the spawn).
 */
export interface WorktreeSetupEvent extends Base {
  type: "worktree_setup";
  included?: { files: number; bytes: number };
  /** The set-up script, relative to the checkout's top (`.muster/worktree-setup`). */
  script?: string;
  exitCode?: number;
  durationMs?: number;
  /** The end of what it printed (stdout and stderr together), at most 16 KiB. */
  outputTail?: string;
}

export type MusterEvent =
  | WorktreeSetupEvent
  | ChildStartedEvent
  | TurnStartedEvent
  | RunnerStartedEvent
  | AgentSessionEvent
  | RunnerExitedEvent
  | TurnQueuedEvent
  | TurnHeldEvent
  | RateLimitedEvent
  | ToolActivityEvent
  | UsageEvent
  | ProgressEvent
  | PermissionEvent
  | QuestionEvent
  | AnsweredEvent
  | CompletionEvent
  | RestartedEvent
  | VerifyStartedEvent
  | VerifyFinishedEvent
  | ChildExitedEvent;

export type EventType = MusterEvent["type"];

/** What a writer supplies; the log fills in v, eventId, seq and ts. */
export type EventInput = MusterEvent extends infer E
  ? E extends MusterEvent
    ? Omit<E, "v" | "eventId" | "seq" | "ts"> & { eventId?: string }
    : never
  : never;

/** Caps enforced outside the model (artifacts/caps.ts): per turn, clocks; cumulative, counts. */
export interface Caps {
  /** Wall clock of one turn, from its start. */
  maxTimeMs?: number;
  /** Time a running turn may go without any output from its agent. */
  idleTimeoutMs?: number;
  maxTurns?: number;
  maxToolCalls?: number;
  /** Input + output tokens. */
  maxTokens?: number;
  /** US dollars, where runners report cost. */
  maxCost?: number;
}

/** meta.json: immutable manifest of one child. */
export interface ChildMeta {
  v: number;
  id: string;
  primary: string;
  parent: string | null;
  depth: number;
  agent: string;
  runner: string;
  cwd: string;
  createdAt: string;
  /** Runner settings resolved from the profile at spawn time. */
  profile: {
    name: string;
    source: string;
    model?: string;
    reasoning?: string;
    command?: string[];
    protocol?: "text" | "muster-jsonl";
    systemPrompt?: string;
    /** Tool narrowing and turn limit, for runners that support them. */
    tools?: string[];
    disallowedTools?: string[];
    maxTurns?: number;
    /** "ask": tools the profile does not pre-approve become permission requests to the parent. */
    permissions?: "ask";
    /** The profile's runner mode, when it names one (absent: session where the CLI has one). */
    runnerMode?: "session" | "oneshot" | "tui";
    /** The ACP session mode to select once the agent's session is open (runner acp). */
    acpMode?: string;
  };
  /** Names of the environment variables handed to the child (never values). */
  envNames: string[];
  /** Caps on this child and everything it spawns (artifacts/caps.ts), enforced by its host. */
  caps?: Caps;
  /** The child whose conversation this one started from (`spawn --fork`). */
  forkedFrom?: string;
  /** Its restart policy (artifacts/restart.ts): a turn lost to a dead host or agent is restarted. */
  restart?: RestartPolicy;
  /** The acceptance check every turn's answer must pass (`spawn --verify`), run by the host where it runs. */
  verify?: VerifySpec;
}

/** An acceptance check as the host runs it (checked and made whole at spawn: core/verify-spec.ts). */
export interface VerifySpec {
  /** What it runs, in the child's working directory: `sh -c <line>` for a command line. */
  argv: string[];
  /** How it reads to a person: the command line, or the argv joined. */
  command: string;
  /** Corrective turns the agent is given when the check fails (0: none). */
  retries: number;
  /** Each run's bound in time. */
  timeoutMs: number;
}
