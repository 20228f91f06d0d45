/** Stable error codes; each maps to one CLI exit code (see docs/exit-codes in the README). */
export type MusterErrorCode =
  | "usage" // bad input: nothing was created
  | "not_found" // unknown child, turn or agent
  | "invalid_id"
  | "not_running" // the child cannot take this action in its current state
  | "mux_unavailable" // tmux missing or failed
  | "output_too_large"
  | "integrity" // a snapshot does not match its recorded sha256
  | "internal";

/** What to do next, spelled for each surface: the CLI names a command, the MCP server a tool call. */
export interface NextStep {
  cli: string;
  mcp: string;
}

/**
 * The one error class of muster: a stable `code`, a one-line message, the original error as `cause`, and
 * optionally the next step, which each surface appends in its own words (`forSurface`).
 */
export class MusterError extends Error {
  readonly code: MusterErrorCode;
  readonly next: NextStep | undefined;
  constructor(code: MusterErrorCode, message: string, options?: { cause?: unknown; next?: NextStep }) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "MusterError";
    this.code = code;
    this.next = options?.next;
  }

  /** The message with the next step for this surface. */
  forSurface(surface: keyof NextStep): string {
    return this.next ? `${this.message}; ${this.next[surface]}` : this.message;
  }
}

export const isMusterError = (e: unknown): e is MusterError => e instanceof MusterError;
