/** What a turn is handed (turn.ts): the child's files, records and runner, its conversation, how it runs. */
import type { ChildMeta, ProviderError } from "../artifacts/events.js";
import type { InboxItem } from "../artifacts/inbox.js";
import type { ChildFiles } from "../artifacts/layout.js";
import type { EventLog } from "../artifacts/log.js";
import type { Runner } from "../runners/types.js";
import type { LoadedSession } from "../sessions/store.js";
import type { PaneRenderer } from "./render.js";
import type { DiskReserve } from "./reserve.js";
import type { TurnEngine } from "./turn-engine.js";

/** The conversation the host carries from turn to turn (seeded from the session file on start). */
export interface Conversation {
  sessionFile: string;
  /** Model and reasoning of the last turn: defaults for a typed line, which names none. */
  model?: string;
  reasoning?: string;
  /** The runner's own session id from the last turn (native resume). */
  runnerSessionId?: string;
}

export interface TurnDeps {
  files: ChildFiles;
  meta: ChildMeta;
  log: EventLog;
  render: PaneRenderer;
  runner: Runner;
  env: Record<string, string>;
  conversation: Conversation;
  /** Why this turn may not run at all (the tree's budget is spent, a cancel began), checked as it starts. */
  refuse?: () => Refusal | undefined;
  /**
   * The turn failed on a provider error that will refuse every turn of the tree alike (quota, credential): the
   * host pauses the tree, before the completion is written, so whoever reads the completion finds the pause.
   */
  pauseTree?: (error: ProviderError, turnId: string) => void;
  /** Space held back for recording the turn's end when the disk fills up. */
  reserve?: DiskReserve;
  /** How the child's turns run (its runner mode), chosen once by the host. */
  engine: TurnEngine;
  /** The acceptance check runs (true) or ended (false): the idle cap does not count that time. */
  checking?: (running: boolean) => void;
}

/** A turn settled at its start without running the agent. */
export interface Refusal {
  status: "exhausted" | "cancelled";
  reason: string;
}

/** What one run of the agent in a turn is asked: the turn's request, or a correction after a failed check. */
export interface Asked {
  item: InboxItem;
  pFile: string;
  /** The conversation before this request, read when first asked for (sessions/store.ts, sessionAsOfNow). */
  history: () => LoadedSession;
}
