/**
 * The restart policy of a child (`--restart`, a profile's `restart:`, a workflow step's `restart`): whether a
 * turn whose host or agent died is started again on the same conversation, and at most how many times.
 */
import { oneLine } from "../util/text.js";

/** Stored in meta.json: restart a turn lost to a dead host or agent at most `onLost` times. */
export interface RestartPolicy {
  onLost: number;
}

/** `on-lost` without a count. */
export const DEFAULT_RESTARTS = 3;
/** More restarts than this is a crash loop nobody should pay for. */
export const MAX_RESTARTS = 20;

const SPELLING = /^on-lost(?::(\d{1,3}))?$/;

/** What the spellings are, for an error or a help line. */
export const RESTART_RULE = `"no" or "on-lost[:N]" (N from 1 to ${MAX_RESTARTS}, default ${DEFAULT_RESTARTS})`;

/**
 * Reads a policy as written: `no` (null), `on-lost` or `on-lost:N`; undefined for anything else (each front
 * end words the refusal).
 */
export function parseRestart(text: string): RestartPolicy | null | undefined {
  const t = text.trim();
  if (t === "no") return null;
  const m = SPELLING.exec(t);
  if (!m) return undefined;
  const n = m[1] === undefined ? DEFAULT_RESTARTS : Number(m[1]);
  return n >= 1 && n <= MAX_RESTARTS ? { onLost: n } : undefined;
}

/** The policy as written back (status, docs): `on-lost:N`. */
export const restartText = (p: RestartPolicy): string => `on-lost:${p.onLost}`;

/** Waits before restart `attempt` (1-based): 1 s, 2 s, 4 s, 8 s, then 10 s each. */
export const restartBackoffMs = (attempt: number): number =>
  Math.min(1000 * 2 ** Math.max(0, attempt - 1), 10_000);

const NOTE = /^muster restarted you after your process died \([^\n]*\); continue the task:\n\n/;

/** The prompt a restarted turn runs: a note of what happened ahead of the task (an earlier note replaced). */
export function replayPrompt(original: string, reason: string, attempt: number, max: number): string {
  const task = original.replace(NOTE, "");
  return `muster restarted you after your process died (${oneLine(reason, 300)}; restart ${attempt} of ${max}); continue the task:\n\n${task}`;
}

/** A crash loop's end: this death and every one before it, each restart's reason in order. */
export function everyReason(last: string, restarts: { reason: string }[], max: number): string {
  const before = restarts.map((r, i) => `${i + 1}) ${oneLine(r.reason, 200)}`).join("; ");
  return `${last}; restarted ${restarts.length} times (on-lost:${max}), each time lost: ${before}`;
}
