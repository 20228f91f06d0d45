/**
 * Which of a child's events a person is told of, and in what words: a question or a permission it waits on
 * (`waiting`), a turn that completed (`finished`) or did not (`failed`; a stop someone asked for is neither),
 * a provider refusal that paused the tree (`paused`), and a child whose host died (`lost`, whoever recorded it).
 * Pure: one event in, one notice or none out.
 */
import type { MusterEvent } from "../artifacts/events.js";
import { isTerminal } from "../artifacts/tree-pause.js";
import { shortId } from "../util/ids.js";
import type { NotifyEvent } from "./targets.js";

export interface Notice {
  event: NotifyEvent;
  /** One line, for a phone's lock screen. */
  title: string;
  /** A few lines more (bounded). */
  text: string;
  child: string;
  agent: string;
  /** The turn's outcome, for finished and failed. */
  status?: string;
  /** The event it is about: a target is told of each once. */
  eventId: string;
  ts: string;
}

const TEXT_MAX = 1000;
const bound = (s: string): string => (s.length > TEXT_MAX ? `${s.slice(0, TEXT_MAX - 1)}…` : s);

// Stops someone asked for: the person who asked knows. A turn lost with its host: the child's `lost` says it.
const NOT_TOLD = new Set(["cancelled", "interrupted", "lost"]);

/** The notice for one event of child `who`, or undefined when it is not one a person is told of. */
export function noticeOf(e: MusterEvent, who: { child: string; agent: string }): Notice | undefined {
  const label = `${shortId(who.child)} (${who.agent})`;
  const base = { child: who.child, agent: who.agent, eventId: e.eventId, ts: e.ts };
  if (e.type === "question")
    return { ...base, event: "waiting", title: `${label} asks a question`, text: bound(e.text) };
  if (e.type === "permission" && e.state === "pending" && e.requestId !== undefined)
    return {
      ...base,
      event: "waiting",
      title: `${label} asks permission for ${e.tool}`,
      text: bound(e.summary ?? e.tool),
    };
  if (e.type === "child_exited")
    return e.reason === "lost"
      ? { ...base, event: "lost", title: `${label} was lost`, text: bound(e.detail ?? "") }
      : undefined;
  if (e.type !== "completion" || e.by !== "child") return undefined;
  if (isTerminal(e.providerError))
    return {
      ...base,
      event: "paused",
      status: e.status,
      title: `the tree is paused: ${label} was refused (${e.providerError.kind})`,
      text: bound(
        `${e.providerError.message}${e.providerError.resetAt ? ` (until ${e.providerError.resetAt})` : ""}`,
      ),
    };
  if (e.status === "completed")
    return { ...base, event: "finished", status: e.status, title: `${label} finished its turn`, text: "" };
  if (NOT_TOLD.has(e.status)) return undefined;
  return {
    ...base,
    event: "failed",
    status: e.status,
    title: `${label} ${e.status.replace("_", " ")}`,
    text: bound(e.reason ?? ""),
  };
}
