/**
 * A child's acceptance check as a caller asks for it (`spawn --verify`, MCP `verify`, a workflow step's
 * `verify`, a profile's `verify:`), before the core makes it whole (core/verify.ts). Plain data, shared by the
 * core, profiles and front ends.
 */
export interface VerifyRequest {
  /** A command line (run by `sh -c` in the child's working directory), or an argv run as it is. */
  command?: string | string[];
  /** Corrective turns the agent gets when the check fails (default 0). */
  retries?: number;
  /** Each run's time bound (default VERIFY_DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** A check with no bound of its own stops after 10 minutes: long enough for a test suite, short of forever. */
export const VERIFY_DEFAULT_TIMEOUT_MS = 10 * 60_000;
/** More corrections than this is a loop, not a fix. */
export const VERIFY_MAX_RETRIES = 10;
