/**
 * Where a child's host process runs — this machine today; an SSH host, a container or a Pod next — as one
 * seam. A place runs commands there (`exec`), knows how to start muster's child host there, controls that
 * host's processes (`HostControl`) and says whether a command is installed there. What *shows* a child's
 * terminal (tmux, Zellij, a pty holder) is the other seam (mux/backend.ts): a terminal runs its client
 * commands through its place's `exec`, so tmux on another machine needs no tmux code of its own.
 */

export type Liveness = "alive" | "dead" | "unknown";

export interface DeadStatus {
  /** Exit status when the process exited, null when killed by a signal. */
  exitCode: number | null;
  signal: number | null;
}

/** A pane as a place sees it: opaque, tagged with the terminal that made it (mux/backend.ts PaneRef). */
export interface HostPane {
  backend: string;
}

/** A child host as the core knows it: the pid it recorded, its artifact dir, and where it runs. */
export interface HostRef {
  /** The host's pid as the host recorded it (child_started), on whatever machine its place runs it. */
  pid: number;
  /** The child's artifact dir; a local host's command line names it, which guards against pid reuse. */
  dir: string;
  /** The pane the host runs in (null while a spawn has not recorded it yet). */
  pane: HostPane | null;
}

/**
 * The process control the core needs over a child host. Each place supplies its own (a local one asks
 * /proc; a remote one asks over its connection and says "unknown" rather than guess); a terminal may add
 * what it alone knows (tmux: the exit status its dead pane keeps).
 */
export interface HostControl {
  /** Sends `signal` to the host; false when no such host runs any more. */
  signal(host: HostRef, signal: "SIGTERM" | "SIGKILL"): Promise<boolean>;
  /** "dead" only when proven (gone, or its pid now runs something else); "unknown" when it cannot tell. */
  alive(host: HostRef): Promise<Liveness>;
  /** How the host ended, when it can be told; null while it runs or when nobody knows. */
  exitStatus(host: HostRef): Promise<DeadStatus | null>;
  /** Signals a process group on the host's machine (the runner of a turn whose host died). */
  signalGroup(host: HostRef, pgid: number, signal: "SIGTERM" | "SIGKILL"): Promise<void>;
  /**
   * The runners still running for the child in `dir` (process groups they lead), found without their pid: a host
   * that died between starting its runner and recording it left no pid to kill.
   */
  runnersOf?(dir: string): Promise<number[]>;
  /** Why a host found dead is gone, when its place knows more than its pid (its container removed, its Pod evicted). */
  deathReason?(host: HostRef): Promise<string | null>;
  /** One line on the processes that mention `dir` and what they wait in (why a host never started). */
  describeProcesses?(dir: string): string;
}

export interface ExecOptions {
  /** The command's whole environment (nothing else of the caller's is passed). */
  env: NodeJS.ProcessEnv;
  /** Written to the command's stdin, then closed; without it stdin is empty. */
  input?: string | Buffer;
  timeoutMs: number;
  /**
   * For a command that may start a long-lived server (a tmux server keeps every descriptor its first client
   * inherited): hand it no descriptor of ours beyond stdio.
   */
  isolate?: boolean;
}

/** What one command printed, and how it exited. */
export interface ExecRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** A command that could not run at all (`start`: not found, not executable) or did not end in time. */
export class ExecFailure extends Error {
  constructor(
    readonly kind: "start" | "timeout",
    message: string,
    readonly errno?: NodeJS.ErrnoException,
  ) {
    super(message, errno ? { cause: errno } : undefined);
  }
}

export interface Place {
  /** How registry entries name it: `local`, later `ssh:build1` and the like. */
  readonly name: string;
  readonly host: HostControl;
  /** Runs argv there (never through a shell); resolves on any exit code, throws ExecFailure. */
  exec(argv: string[], opts: ExecOptions): Promise<ExecRun>;
  /** The argv that starts muster's child host for `dir` there (node and install path *there*). */
  hostArgv(dir: string, extra?: string[]): string[];
  /** Where `command` is found there on `env`'s PATH (or as the path it is), or undefined. */
  findCommand(command: string, env: NodeJS.ProcessEnv): Promise<string | undefined>;
  /**
   * For a place on another machine: readies it for a child (muster's far side installed there on first use)
   * and gives the child's working directory there for `cwd` here; refuses in one line when there is none.
   * Without it a child works in `cwd` itself.
   */
  workdir?(cwd: string): Promise<string>;
  /**
   * For a place on another machine: what of `env` (a local child's whole environment) its host there gets,
   * merged over that host's own environment: muster's settings and the variables `named` (the profile's).
   * Without it a child's host gets `env` as it is.
   */
  handover?(env: Record<string, string>, named: readonly string[]): Record<string, string>;
  /** Why runner mode `tui` cannot run there, when it cannot (a spawn asking for it is refused with this). */
  readonly tuiUnavailable?: string;
  /** For a place on another machine: readies it (as `workdir` does) without asking for a folder. */
  ready?(): Promise<void>;
  /**
   * For a place on another machine, once ready: where a path under this machine's state root is there (a
   * child's worktree: `<state root>/worktrees/<id>`). With it, `--isolation worktree` ships the parent's
   * HEAD there as a git bundle and fetches the child's commits back (isolation/far.ts).
   */
  pathThere?(local: string): string;
  /**
   * For a place on another machine, once ready: the argv that runs one of muster's own scripts there (`file`:
   * its path under the package root, shipped with muster's far side, e.g. `dist/isolation/setup-main.js`) with
   * the node there.
   */
  scriptArgv?(file: string): string[];
  /**
   * For a place whose hosts see another disk: from now on keep the child's artifact dir `dir` (on this
   * machine) a mirror of its dir there (place/mirror/carry.ts), resolving once the far dir holds what the
   * host reads at start. The core calls it after writing a child's start files and before its host starts
   * (spawn, resume). A place on this machine's disk has none.
   */
  carry?(dir: string, env: NodeJS.ProcessEnv): Promise<void>;
  /** Removes what `carry` made there for `dir` (the child is removed); best effort. */
  forget?(dir: string, env: NodeJS.ProcessEnv): Promise<void>;
  /**
   * The argv a person runs on this machine to run `argv` there with their own terminal (an attach
   * command); without it, `argv` runs here as it is.
   */
  interactive?(argv: string[]): string[];
  /**
   * For a place made for one child (its container): removes it whole. A spawn refused after the place was
   * readied calls it, so a refusal leaves nothing behind; best effort.
   */
  discard?(): Promise<void>;
  /**
   * For a place made for one child (its container, its Pod): the terminal's server there is started by that
   * child's first spawn, so a terminal may make its session and the child's window in one command.
   */
  readonly ownTerminal?: boolean;
  /** How to get agent CLI `runner` there, where that is not installing it on a machine (an image to build). */
  installHint?(runner: string): string;
  /**
   * For a place made for one child: the child was cancelled or closed and its pane is gone, so the place may
   * rest (a container is stopped, its files kept; a resume starts it again). Best effort.
   */
  rest?(dir: string): Promise<void>;
}

/** The place of registry entries written before places had names, and of every child by default. */
export const LOCAL_PLACE = "local";
