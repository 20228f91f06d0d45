import type { TuiAdapter } from "./tui/types.js";
import type { Runner, SessionDriver, SessionIo, SessionSpec } from "./types.js";

/** A long-lived protocol a runner's `session()` specs name, and the driver that speaks it. */
export interface SessionProtocol {
  readonly protocol: SessionSpec["protocol"];
  driver(spec: SessionSpec, io: SessionIo): SessionDriver;
}

/**
 * Everything muster knows of one agent CLI (or built-in runner), in one place: the registries of one-shot
 * runners, session drivers and TUI adapters, the help-text lists and the pinned CLIs are all read from these.
 */
export interface AgentCli {
  /** Its one-shot mode (argv and stream parser), catalog, binary, and what its `session()` spec looks like. */
  readonly runner: Runner;
  /** The driver of the protocol its `runner.session()` specs name (mode `session`). */
  readonly session?: SessionProtocol;
  /** Its own TUI in the pane (mode `tui`). */
  readonly tui?: TuiAdapter;
}
