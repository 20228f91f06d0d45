/**
 * Forking a conversation: a new child starts with another child's conversation so far (its tasks and the
 * answers it completed), to take a line of work in another direction while the first goes on.
 */
import { appendSession, type LoadedSession, type SessionMessage } from "./store.js";

/** The most conversation text a fork carries; older messages beyond it are left out (and counted). */
export const MAX_FORK_BYTES = 1024 * 1024;

/** What a fork copied: messages carried and left out. */
export interface ForkCopy {
  messages: number;
  leftOut: number;
}

type Turn = Extract<SessionMessage, { role: "user" | "assistant" }>;

/** The messages of `source` a fork carries: user turns and completed answers, newest kept when over the bound. */
function carried(source: LoadedSession): { kept: Turn[]; leftOut: number } {
  const turns = source.messages.filter(
    (m): m is Turn => m.role === "user" || (m.role === "assistant" && m.metadata.status === "completed"),
  );
  let bytes = 0;
  let first = turns.length;
  while (first > 0) {
    const size = Buffer.byteLength(turns[first - 1]!.text);
    if (bytes + size > MAX_FORK_BYTES) break;
    bytes += size;
    first -= 1;
  }
  return { kept: turns.slice(first), leftOut: first };
}

/**
 * Appends `source`'s conversation to a new child's session (after its seed): a system message naming where
 * it came from, then the carried messages marked `forkedFrom`. No runner session id is copied: the runner's
 * own session belongs to the source, so the fork's first turn hands the runner this conversation as text.
 */
export function appendFork(file: string, source: LoadedSession, sourceId: string, ts: string): ForkCopy {
  const { kept, leftOut } = carried(source);
  const note = leftOut > 0 ? ` (${leftOut} older messages left out: over ${MAX_FORK_BYTES} bytes)` : "";
  const lines: SessionMessage[] = [
    {
      type: "message",
      role: "system",
      kind: "fork",
      text: `forked from child ${sourceId}: its conversation so far follows${note}`,
      ts,
      metadata: { forkedFrom: sourceId },
    },
    // What the turn was and how it ended; not the source's settings or runner session.
    ...kept.map(
      (m): Turn =>
        m.role === "user"
          ? { ...m, metadata: { turnId: m.metadata.turnId, source: m.metadata.source, forkedFrom: sourceId } }
          : {
              ...m,
              metadata: { turnId: m.metadata.turnId, status: m.metadata.status, forkedFrom: sourceId },
            },
    ),
  ];
  appendSession(file, lines);
  return { messages: kept.length, leftOut };
}

/** Whether a conversation began as a fork (its first turn must hand the runner the forked conversation). */
export const isFork = (s: LoadedSession): boolean =>
  s.messages.some((m) => m.role === "system" && m.kind === "fork");
