/** The artifact protocol's event records (spec: artifacts/README.md, schemas: artifacts/schema/). */

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
  | "interrupted";

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
  /** Who wrote it: the child host, or a parent that found the host dead. */
  by: "child" | "parent";
}

export interface ChildExitedEvent extends Base {
  type: "child_exited";
  reason: "cancelled" | "lost" | "closed" | "error";
  detail?: string;
  by: "child" | "parent";
}

export type MusterEvent =
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
}
