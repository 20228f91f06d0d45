import * as fs from "node:fs";
import * as path from "node:path";
import type { Usage } from "../artifacts/events.js";
import { pathsOfArtifactDir } from "../artifacts/layout.js";
import { MAX_RECORD_BYTES, NdjsonReader } from "../artifacts/reader.js";
import { appendJsonLines } from "../util/fsx.js";
import { linesFromEnd } from "../util/lines-from-end.js";

export const SESSION_VERSION = 1;

/**
 * The longest conversation line read back. A user message carries the exact prompt (up to 1 MiB), and JSON
 * escapes a control character as six bytes (`\u0001`): with the 1 MiB of an event record, a long prompt's
 * line was skipped on load, and its turn went missing from transcripts, forks and the next turn's defaults.
 */
export const SESSION_RECORD_BYTES = 6 * MAX_RECORD_BYTES + 64 * 1024;

/** First line of a child's conversation file. */
export interface SessionHeader {
  type: "session";
  version: number;
  /** The child id: also the file's stem. */
  id: string;
  primary: string;
  parent: string | null;
  createdAt: string;
}

/** The immutable manifest carried as metadata by the profile's system message. */
export interface SessionManifest {
  primary: string;
  parent: string | null;
  agent: string;
  runner: string;
}

export type SessionMessage =
  | {
      type: "message";
      role: "system";
      kind: "primary-context" | "child-role" | "profile" | "fork";
      text: string;
      ts: string;
      /** forkedFrom: the child whose conversation follows (sessions/fork.ts). */
      metadata?: { manifest?: SessionManifest; forkedFrom?: string };
    }
  | {
      type: "message";
      role: "user";
      text: string;
      ts: string;
      metadata: {
        turnId: string;
        /** verify: muster sent the agent its failed acceptance check, within the same turn. */
        source: "inbox" | "typed" | "verify";
        model?: string;
        reasoning?: string;
        runnerSessionId?: string;
        /** Copied from this child's conversation by a fork. */
        forkedFrom?: string;
      };
    }
  | {
      type: "message";
      role: "assistant";
      text: string;
      ts: string;
      metadata: {
        turnId: string;
        status: string;
        usage?: Usage;
        runnerSessionId?: string;
        output?: string;
        forkedFrom?: string;
      };
    };

export type SessionLine = SessionHeader | SessionMessage;

/** `primaries/<primary>/subagents/<child>.jsonl`, from the child's artifact dir (`primaries/<primary>/artifacts/<child>`). */
export function sessionFileOf(artifactDir: string): string {
  const { primary, child } = pathsOfArtifactDir(artifactDir);
  return primary.sessionFile(child);
}

/** Appends conversation lines durably (one write + fsync per call); the file is created 0600 on first use. */
export function appendSession(file: string, lines: SessionLine[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  appendJsonLines(file, lines);
}

/** A loaded conversation; a torn or malformed line is skipped (and counted), never fatal. */
export interface LoadedSession {
  header: SessionHeader | undefined;
  messages: SessionMessage[];
  skipped: number;
}

export function loadSession(file: string, endAt?: number): LoadedSession {
  let skipped = 0;
  const lines = new NdjsonReader<SessionLine>(
    file,
    () => {
      skipped += 1;
    },
    0,
    SESSION_RECORD_BYTES,
    endAt,
  ).readNew();
  const header = lines.find((l): l is SessionHeader => l.type === "session");
  const messages = lines.filter((l): l is SessionMessage => l.type === "message");
  return { header, messages, skipped };
}

/**
 * The conversation as it stands now, read only if asked for, and then as it stood now (lines appended since are
 * not in it). A turn asks only when its runner is handed the conversation as text: a runner that resumes its own
 * session never is, and then the file is not read at all, however long it grew.
 */
export function sessionAsOfNow(file: string): () => LoadedSession {
  const size = fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
  let loaded: LoadedSession | undefined;
  return () => {
    loaded ??= loadSession(file, size);
    return loaded;
  };
}

/** The manifest from the profile system message (identity on resume). */
export function manifestOf(s: LoadedSession): SessionManifest | undefined {
  for (const m of s.messages) if (m.role === "system" && m.kind === "profile") return m.metadata?.manifest;
  return undefined;
}

/** Defaults for the next turn: the latest user message's model and reasoning. */
export const lastSettings = (s: LoadedSession): TurnDefaults => settingsOf(s.messages.findLast(isUser));

/**
 * lastSettings of a conversation file, read from its end (a follow-up's defaults): what it costs does not grow
 * with the conversation, as loading the whole file did (~100 ms a follow-up at 6 MB).
 */
export const lastSettingsOf = (file: string): TurnDefaults => settingsOf(newestMessage(file, isUser));

/** The runner's own session id from the latest turn that reported one (native resume). */
export const lastRunnerSession = (s: LoadedSession): string | undefined =>
  s.messages.findLast(carriesRunnerSession)?.metadata.runnerSessionId;

/** lastRunnerSession of a conversation file, read from its end (a host resuming a long conversation). */
export const lastRunnerSessionOf = (file: string): string | undefined =>
  newestMessage(file, carriesRunnerSession)?.metadata.runnerSessionId;

/** Resumable once a turn has completed with a result; a child whose first turn failed is not. */
export const isResumable = (s: LoadedSession): boolean => s.messages.some(isAnswer);

/** isResumable of a conversation file, read from its end: the newest answered turn is usually its last. */
export const isResumableFile = (file: string): boolean => newestMessage(file, isAnswer) !== undefined;

/** The newest message `pick` takes, reading the file from its end; torn or malformed lines are passed over. */
function newestMessage<M extends SessionMessage>(
  file: string,
  pick: (m: SessionMessage) => m is M,
): M | undefined;
function newestMessage(file: string, pick: (m: SessionMessage) => boolean): SessionMessage | undefined;
function newestMessage(file: string, pick: (m: SessionMessage) => boolean): SessionMessage | undefined {
  for (const line of linesFromEnd(file, SESSION_RECORD_BYTES)) {
    let v: unknown;
    try {
      v = JSON.parse(line.toString("utf8"));
    } catch {
      continue;
    }
    if (isMessage(v) && pick(v)) return v;
  }
  return undefined;
}

type TurnDefaults = { model?: string; reasoning?: string };
type UserMessage = Extract<SessionMessage, { role: "user" }>;
type TurnMessage = Exclude<SessionMessage, { role: "system" }>;

// As loadSession takes a line: a JSON object of type "message" (with the metadata a message of its role carries).
const isMessage = (v: unknown): v is SessionMessage =>
  typeof v === "object" &&
  v !== null &&
  (v as { type?: unknown }).type === "message" &&
  ((v as { role?: unknown }).role === "system" ||
    (typeof (v as { metadata?: unknown }).metadata === "object" &&
      (v as { metadata?: unknown }).metadata !== null));

const isUser = (m: SessionMessage): m is UserMessage => m.role === "user";
const carriesRunnerSession = (m: SessionMessage): m is TurnMessage =>
  m.role !== "system" && !!m.metadata.runnerSessionId;
/** An answer the agent gave: completed, or given but refused by the child's acceptance check. */
const answered = (status: string): boolean => status === "completed" || status === "failed_verification";
const isAnswer = (m: SessionMessage): boolean => m.role === "assistant" && answered(m.metadata.status);

const settingsOf = (m: UserMessage | undefined): TurnDefaults => ({
  ...(m?.metadata?.model ? { model: m.metadata.model } : {}),
  ...(m?.metadata?.reasoning ? { reasoning: m.metadata.reasoning } : {}),
});

/** A request after the conversation so far (and any other context), for an agent that does not have it. */
export function transcriptPrompt(before: string, request: string, context: string[] = []): string {
  return [
    ...(before ? [`The conversation so far:\n\n${before}`] : []),
    ...context,
    `The new request:\n\n${request}`,
  ].join("\n\n");
}

/** The conversation so far as text, for runners without native resume. */
export function transcript(s: LoadedSession): string {
  const turns = s.messages.filter((m) => m.role === "user" || isAnswer(m));
  return turns.map((m) => `${m.role === "user" ? "User" : "Assistant"}:\n${m.text}`).join("\n\n");
}

/** Only direct `<id>.jsonl` files: nested folders never show in a primary's own listing. */
export function listSessions(subagentsDir: string): string[] {
  try {
    return fs
      .readdirSync(subagentsDir, { withFileTypes: true })
      .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
      .map((e) => e.name.slice(0, -".jsonl".length))
      .sort();
  } catch {
    return [];
  }
}
