/**
 * setTimeout's longest delay is 2^31 - 1 ms (about 24.8 days): a longer one fires at once (Node warns
 * TimeoutOverflowWarning and uses 1 ms). Durations a user gives that become timers are bounded below it.
 */
export const MAX_TIMER_MS = 24 * 86_400_000;

/** How the bound is written in messages. */
export const MAX_TIMER_TEXT = "24d";

/** Why `ms` cannot be a timer's delay (one line naming `what`), or undefined when it can. */
export function timerProblem(ms: number, what: string): string | undefined {
  return ms > MAX_TIMER_MS ? `${what} must be at most ${MAX_TIMER_TEXT}` : undefined;
}

/** A delay setTimeout keeps: `ms` bounded by MAX_TIMER_MS (for durations from files, already checked once). */
export const timerDelay = (ms: number): number => Math.min(ms, MAX_TIMER_MS);
