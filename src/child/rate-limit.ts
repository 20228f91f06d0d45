/**
 * A turn that hits a rate limit lifting soon is run again once it has lifted, instead of failing: the host waits
 * until the provider's reset time (recorded as `rate_limited`, so the wait is visible) when that is at most
 * MAX_RATE_LIMIT_WAIT_MS away, at most MAX_RATE_LIMIT_WAITS times a turn. A limit with no reset time, or one
 * further off, fails the turn as before.
 */
import type { Outcome } from "./run-plan.js";
import type { TurnControl } from "./turn-control.js";

/** The longest wait for a rate limit to lift before the turn runs again. */
export const MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000;
/** How many times one turn waits for a rate limit. */
export const MAX_RATE_LIMIT_WAITS = 3;

/** How long to wait before the turn runs again (ms), or undefined: it settles as it is. */
export function rateLimitWait(outcome: Outcome, waits: number, now = Date.now()): number | undefined {
  const e = outcome.providerError;
  if (outcome.status !== "errored" || e?.kind !== "rate_limit" || !e.resetAt) return undefined;
  if (waits >= MAX_RATE_LIMIT_WAITS) return undefined;
  const ms = Date.parse(e.resetAt) - now;
  if (!Number.isFinite(ms) || ms > MAX_RATE_LIMIT_WAIT_MS) return undefined;
  return Math.max(0, ms);
}

/** Sleeps `ms` unless the turn is stopped first (cancel, interrupt, a failed record); true when it slept through. */
export function sleepUnlessStopped(control: TurnControl, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    control.onStop(() => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
