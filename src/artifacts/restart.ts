/**
 * The restart policy of a child (`--restart`, a profile's `restart:`, a workflow step's `restart`): whether a
 * turn whose host or agent died is started again on the same conversation, and at most how many times.
 */

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
