import type { NextStep } from "./next-step.js";

export { NEXT_ACTIONS, type NextAction, type NextStep } from "./next-step.js";

/**
 * Stable error codes (docs/cli.md "Error codes"): what went wrong, not where. Front ends decide what each means
 * to them (the CLI's exit codes: src/cli/exit-codes.ts).
 */
export type MusterErrorCode =
  | "invalid_argument" // a value given is malformed, missing, out of range, ambiguous, or contradicts another
  | "invalid_id" // an id is not a UUID or a prefix of one
  | "invalid_config" // a file muster reads (an agent profile, a client's config) is broken or cannot be edited
  | "not_found" // no such child, turn, agent, group, primary or model
  | "other_primary" // the child belongs to another primary
  | "not_running" // the child (or its pane) has exited or been lost, or has no pane
  | "busy" // the child has a turn that has not settled yet, or a state file stays locked by a live process
  | "not_resumable" // no turn of the child completed with a result
  | "limit_reached" // depth, live children, groups, group members, a sealed group, `spawn: false`
  | "unsupported" // cannot be done here: a runner missing or not built in, no terminal, not inside tmux
  | "mux_unavailable" // tmux missing or failed
  | "unreachable" // a child's place (another machine, a container, a namespace) did not answer
  | "integrity" // a file does not match its recorded sha256, or is not what it must be
  | "storage" // a file could not be written or read: disk full, read-only file system, no permission
  | "internal";

/**
 * The one error class of muster: a stable `code`, a one-line message, the original error as `cause`, and
 * optionally the next step as data, which each front end renders in its own words.
 */
export class MusterError extends Error {
  readonly code: MusterErrorCode;
  readonly next: NextStep | undefined;
  /** Lines that back the message up (the end of a failed command's output), shown under it. */
  readonly detail: string | undefined;
  constructor(
    code: MusterErrorCode,
    message: string,
    options?: { cause?: unknown; next?: NextStep; detail?: string },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "MusterError";
    this.code = code;
    this.next = options?.next;
    this.detail = options?.detail;
  }
}

export const isMusterError = (e: unknown): e is MusterError => e instanceof MusterError;
