/** The multiplexer seam: tmux today, Zellij and an embedded pty host behind the same shape. */

/** Where a child's pane lives; stored in the registry so any later process can reach it. */
export interface PaneRef {
  backend: "tmux";
  /** The tmux server: `-L name` (socket name) or `-S path` (socket path). */
  server: { flag: "-L" | "-S"; value: string } | null;
  /** Session name holding the pane. */
  session: string;
  /** Immutable pane id, `%N`. */
  paneId: string;
  /** Window id, `@N`. */
  windowId: string;
}

export type Liveness = "alive" | "dead" | "unknown";

export interface DeadStatus {
  /** Exit status when the process exited, null when killed by a signal. */
  exitCode: number | null;
  signal: number | null;
}

export type Placement = "window" | "split";

export interface SpawnPaneOptions {
  argv: string[];
  cwd: string;
  /** Extra environment for the pane's process (tmux -e); keep secrets out, they show in ps. */
  env?: Record<string, string>;
  name: string;
  placement?: Placement;
  /**
   * "guarded" (default): the pane keeps its exit status even for a command that dies at once.
   * "immediate": start the command with the pane and keep the pane right after — one multiplexer
   * round trip less before it runs; for long-lived commands such as the child host.
   */
  start?: "guarded" | "immediate";
}

export interface Backend {
  readonly name: string;
  /** Version string of the multiplexer, or throws MusterError("mux_unavailable"). */
  version(): Promise<string>;
  spawn(opts: SpawnPaneOptions): Promise<PaneRef>;
  alive(ref: PaneRef): Promise<Liveness>;
  /** Liveness of many panes with one multiplexer call. */
  aliveMany(refs: PaneRef[]): Promise<Map<string, Liveness>>;
  deadStatus(ref: PaneRef): Promise<DeadStatus | null>;
  /** Pastes text into the pane byte-exact (bracketed paste if the app asked); `enter` presses Enter after. */
  send(ref: PaneRef, text: string, opts?: { enter?: boolean }): Promise<void>;
  capture(ref: PaneRef, opts?: { lines?: number }): Promise<string>;
  kill(ref: PaneRef): Promise<void>;
  /** Brings the pane to the front of the calling client (inside the multiplexer). */
  focus(ref: PaneRef): Promise<void>;
  /** argv that attaches a terminal to the pane from outside. */
  attachCommand(ref: PaneRef): string[];
  /** Why `placement` cannot be honoured here and what is done instead; undefined when it can. */
  placementNote?(placement: Placement): string | undefined;
}

/** The warning to show when `placement` was asked for but the backend could not honour it. */
export function placementWarning(backend: Backend, placement: Placement | undefined): string[] {
  const note = placement ? backend.placementNote?.(placement) : undefined;
  return note ? [note] : [];
}
