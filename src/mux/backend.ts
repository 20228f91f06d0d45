/**
 * The seam for what shows a child's terminal: tmux, Zellij or an embedded pty holder. A backend is made
 * for a place (place/place.ts: where the child's host runs) and runs its client commands through that
 * place's exec. Backends register by name (mux/registry.ts); each child's registry entry records the
 * backend its pane lives in and the place its host runs in, and every operation is routed by that record.
 */
import type { DeadStatus, HostControl, Liveness, Place } from "../place/place.js";

export type { DeadStatus, HostControl, HostRef, Liveness } from "../place/place.js";

/** A tmux pane; stored in the registry so any later process can reach it. */
export interface TmuxPaneRef {
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

/** Where a child of any other backend lives: its backend's name, its id there, and what it needs to reach it. */
export interface OtherPaneRef {
  backend: string;
  /** The backend's own id of the pane (shown to users). */
  id: string;
  /** Backend-specific data (JSON): whatever a later process needs to reach the pane. */
  data?: Record<string, unknown>;
}

/** Where a child's pane lives, tagged by backend. */
export type PaneRef = TmuxPaneRef | OtherPaneRef;

export const isTmuxRef = (ref: PaneRef): ref is TmuxPaneRef =>
  ref.backend === "tmux" && typeof (ref as TmuxPaneRef).paneId === "string";

/** The pane's id as a user sees it (`%3` in tmux). */
export const paneLabel = (ref: PaneRef): string => (isTmuxRef(ref) ? ref.paneId : (ref as OtherPaneRef).id);

/** The backend of registry entries and refs written before backends had names. */
export const LEGACY_BACKEND = "tmux";

/** A ref as read from a registry: entries written before backends had names (no `backend`) are tmux panes. */
export function normalizePaneRef(raw: unknown): PaneRef | null {
  if (!raw || typeof raw !== "object") return null;
  const r = raw as Partial<TmuxPaneRef> & Partial<OtherPaneRef>;
  if (typeof r.backend !== "string" && typeof r.paneId === "string")
    return { ...r, backend: LEGACY_BACKEND } as PaneRef;
  return typeof r.backend === "string" ? (r as PaneRef) : null;
}

export type Placement = "window" | "split";

export interface SpawnPaneOptions {
  argv: string[];
  cwd: string;
  /** Extra environment for the pane's process (tmux -e); keep secrets out, they show in ps. */
  env?: Record<string, string>;
  name: string;
  /** The pane's title (tmux select-pane -T), when the caller has one to show. */
  title?: string;
  placement?: Placement;
  /**
   * "guarded" (default): the pane keeps its exit status even for a command that dies at once.
   * "immediate": start the command with the pane and keep the pane right after — one multiplexer
   * round trip less before it runs; for long-lived commands such as the child host. (tmux opens a new
   * window, command, kept pane and name, in one command either way.)
   */
  start?: "guarded" | "immediate";
}

/** What a popup shows: a child's pane, or a command of its own (the supervisor's views). */
export type PopupTarget = { pane: PaneRef } | { argv: string[]; cwd?: string };

export interface PopupOptions {
  title?: string;
  /** Size as tmux takes it: columns/rows or a percentage ("80%"). */
  width?: string;
  height?: string;
}

export interface Backend<R extends PaneRef = PaneRef> {
  readonly name: string;
  /** Where this backend's child hosts run, and its client commands with them. */
  readonly place: Place;
  /** Process control over this backend's child hosts: its place's, with what the terminal adds. */
  readonly host: HostControl;
  /** Version string of the multiplexer, or throws MusterError("mux_unavailable"). */
  version(): Promise<string>;
  spawn(opts: SpawnPaneOptions): Promise<R>;
  alive(ref: R): Promise<Liveness>;
  /** Liveness of many panes with one multiplexer call, keyed by paneLabel. */
  aliveMany(refs: R[]): Promise<Map<string, Liveness>>;
  deadStatus(ref: R): Promise<DeadStatus | null>;
  /** Pastes text into the pane byte-exact (bracketed paste if the app asked); `enter` presses Enter after. */
  send(ref: R, text: string, opts?: { enter?: boolean }): Promise<void>;
  capture(ref: R, opts?: { lines?: number }): Promise<string>;
  kill(ref: R): Promise<void>;
  /**
   * Closes what the backend keeps open only to hold children, once none are left (tmux: muster's detached
   * session when only its placeholder window remains). Best effort; the next spawn opens it again.
   */
  tidy?(): Promise<void>;
  /** Brings the pane to the front of the calling client (inside the multiplexer). */
  focus(ref: R): Promise<void>;
  /** argv that attaches a terminal to the pane from outside. */
  attachCommand(ref: R): string[];
  /**
   * argv for a second viewer of the pane (a page's terminal) that disturbs no one attached already: tmux
   * gives it a session of its own in the pane's group, read-only and ignored in sizing unless `input`.
   * `viewer` names that session. A backend without one is viewed through attachCommand.
   */
  viewCommand?(ref: R, opts: ViewOptions): string[];
  /**
   * Shows a pane, or runs a command, in a popup over the caller's client (for a supervisor); resolves
   * when the popup closes. A backend without popups leaves this out; Muster.popup then says so.
   */
  popup?(target: PopupTarget, opts?: PopupOptions): Promise<void>;
  /** Why `placement` cannot be honoured here and what is done instead; undefined when it can. */
  placementNote?(placement: Placement): string | undefined;
}

export interface ViewOptions {
  /** Whether the viewer may type into the pane (and so size it, as any attached client does). */
  input: boolean;
  /** A name for what the viewer opens (a plain word muster made up). */
  viewer: string;
}

/** The warning to show when `placement` was asked for but the backend could not honour it. */
export function placementWarning(backend: Backend, placement: Placement | undefined): string[] {
  const note = placement ? backend.placementNote?.(placement) : undefined;
  return note ? [note] : [];
}
