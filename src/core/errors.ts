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

/** The one error class of muster: a stable `code`, a one-line message, the original error as `cause`. */
export class MusterError extends Error {
  readonly code: MusterErrorCode;
  constructor(code: MusterErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MusterError";
    this.code = code;
  }
}

export const isMusterError = (e: unknown): e is MusterError => e instanceof MusterError;
