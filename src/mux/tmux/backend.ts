/** The tmux Backend: children run in tmux panes on a private, the caller's, or the default server. */
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { isAbsolute } from "node:path";
import { MusterError } from "../../base/errors.js";
import { rawSetting } from "../../base/settings/resolve.js";
import { localPlace } from "../../place/local/index.js";
import type { Place } from "../../place/place.js";
import type {
  Backend,
  DeadStatus,
  HostControl,
  Liveness,
  TmuxPaneRef as PaneRef,
  Placement,
  PopupOptions,
  PopupTarget,
  SpawnPaneOptions,
  ViewOptions,
} from "../backend.js";
import { isTmuxRef } from "../backend.js";
import * as A from "./argv.js";
import { runTmux, type TmuxExecOptions, type TmuxRun, tmux, tmuxBin, tmuxFailure } from "./exec.js";
import * as P from "./parse.js";

export interface TmuxBackendConfig {
  server: A.ServerRef;
  /** Detached session created on demand (`muster`); null: children go into the caller's session. */
  session: string | null;
  /** Caller's environment: MUSTER_TMUX_BIN, TMUX and TMUX_PANE are read from it. */
  env: NodeJS.ProcessEnv;
  /** Where tmux and the child hosts in its panes run (this machine by default). */
  place?: Place;
}

/** An idle first process: `cat -` waits on the pty without CPU until respawn-pane replaces it. */
const IDLE_ARGV = ["cat", "-"];

/** The detached session with its placeholder window `muster` (which keeps it alive when children die). */
const sessionArgs = (session: string): string[] =>
  A.chain(
    A.newSessionArgs({ name: session, windowName: "muster", argv: IDLE_ARGV }),
    A.remainOnExitArgs(`=${session}:`),
  );
// display-popup waits for its popup to close: a person may keep one open for a long time.
const POPUP_OPEN_MS = 2 ** 31 - 1;
const SPAWN_FORMAT = "#{pane_id}\t#{window_id}\t#{session_name}";

/** Chooses the server and session from the environment (see TmuxBackendConfig). */
export function createTmuxBackend(env: NodeJS.ProcessEnv = process.env, place?: Place): TmuxBackend {
  const at = place ? { place } : {};
  const socket = rawSetting(env, "tmuxSocket");
  if (socket) {
    return new TmuxBackend({ server: { flag: "-L", value: socket }, session: "muster", env, ...at });
  }
  const inside = P.parseTmuxEnv(env.TMUX);
  // The caller's tmux server is on this machine: another place's panes go to a server there.
  const here = !place || place.name === localPlace.name;
  if (inside && env.TMUX_PANE && here) {
    return new TmuxBackend({ server: { flag: "-S", value: inside.socketPath }, session: null, env, ...at });
  }
  return new TmuxBackend({ server: null, session: "muster", env, ...at });
}

export class TmuxBackend implements Backend<PaneRef> {
  readonly name = "tmux";
  readonly place: Place;
  /** Hosts are its place's processes; how one ended is its pane's exit status (remain-on-exit keeps it). */
  readonly host: HostControl;
  private readonly exec: TmuxExecOptions;
  private callerSessionId: string | null = null;

  constructor(readonly config: TmuxBackendConfig) {
    this.place = config.place ?? localPlace;
    this.host = {
      ...this.place.host,
      exitStatus: async (h) => {
        const pane = h.pane as PaneRef | null;
        return pane && isTmuxRef(pane) ? this.deadStatus(pane).catch(() => null) : null;
      },
    };
    this.exec = { env: config.env, place: this.place };
  }

  /** tmux's version string ("3.3a"); throws mux_unavailable when tmux cannot run. */
  async version(): Promise<string> {
    const out = await tmux(null, ["-V"], this.exec);
    const v = P.parseVersion(out);
    if (!v) throw new MusterError("mux_unavailable", `unexpected \`tmux -V\` output: ${out.slice(0, 80)}`);
    return v;
  }

  /**
   * A new window is one tmux command: it starts the real command, keeps the pane on exit and names the window
   * (keepMarkedWindowArgs) — one round trip, which on another machine is one `ssh`/`exec`. A split of the
   * caller's pane opens an idle pane, sets remain-on-exit on it, then respawn-pane starts the real command:
   * set-option in a later call would race a command that exits at once (the pane would vanish).
   */
  async spawn(opts: SpawnPaneOptions): Promise<PaneRef> {
    const run = validateSpawn(opts, this.place === localPlace);
    if (!this.splits(opts)) return this.paneRef(await this.openWindow(opts, run));
    const immediate = opts.start === "immediate";
    const caller = this.config.env.TMUX_PANE!;
    const split = A.splitWindowArgs({
      format: SPAWN_FORMAT,
      ...(immediate ? run : { argv: IDLE_ARGV }),
      target: caller,
      horizontal: true,
    });
    const ref = this.paneRef(await tmux(this.config.server, split, this.exec));
    const begin = immediate ? A.remainOnExitArgs(ref.paneId) : A.startPaneArgs(ref.paneId, run);
    const start = opts.title ? A.chain(begin, A.paneTitleArgs(ref.paneId, opts.title)) : begin;
    const started = await runTmux(ref.server, start, this.exec);
    if (started.exitCode !== 0) {
      await runTmux(ref.server, A.killPaneArgs(ref.paneId), this.exec).catch(() => undefined);
      throw tmuxFailure(start, started);
    }
    return ref;
  }

  /** The ref of a pane from what SPAWN_FORMAT printed. */
  private paneRef(out: string): PaneRef {
    const [paneId = "", windowId = "", ...session] = out.trim().split("\t");
    if (!/^%\d+$/.test(paneId)) throw new MusterError("mux_unavailable", `tmux printed no pane id: ${out}`);
    return { backend: "tmux", server: this.config.server, session: session.join("\t"), paneId, windowId };
  }

  /** Pane liveness; "dead" only when tmux proves the pane exited or is gone. */
  async alive(ref: PaneRef): Promise<Liveness> {
    const args = A.displayMessageArgs(ref.paneId, "#{pane_id}\t#{pane_dead}");
    const run = await runTmux(ref.server, args, this.exec).catch(() => null);
    if (!run) return "unknown";
    if (run.exitCode !== 0) return P.classifyTmuxError(run.stderr);
    const [id, dead] = run.stdout.trim().split("\t");
    // display-message on a missing pane exits 0 and prints nothing.
    if (id !== ref.paneId) return "dead";
    return dead === "1" ? "dead" : "alive";
  }

  /** Liveness of many panes with one list-panes per server; keyed by pane id. */
  async aliveMany(refs: PaneRef[]): Promise<Map<string, Liveness>> {
    const byServer = new Map<string, PaneRef[]>();
    for (const r of refs) {
      const key = JSON.stringify(r.server);
      byServer.set(key, [...(byServer.get(key) ?? []), r]);
    }
    const result = new Map<string, Liveness>();
    await Promise.all(
      [...byServer.values()].map(async (group) => {
        const args = A.listPanesArgs(P.PANE_FORMAT);
        const run = await runTmux(group[0]!.server, args, this.exec).catch(() => null);
        const rows = run?.exitCode === 0 ? P.parsePaneList(run.stdout) : null;
        const failed: Liveness = run ? P.classifyTmuxError(run.stderr) : "unknown";
        for (const r of group) {
          const row = rows?.get(r.paneId);
          result.set(r.paneId, rows ? (row && !row.dead ? "alive" : "dead") : failed);
        }
      }),
    );
    return result;
  }

  /**
   * Exit status of a dead pane kept by remain-on-exit; null while alive or once the pane is gone.
   * Both fields are null only if tmux never reaped the process (see the run-shell note below).
   */
  async deadStatus(ref: PaneRef): Promise<DeadStatus | null> {
    const probe = A.displayMessageArgs(ref.paneId, P.PANE_FORMAT);
    let row = await this.paneRow(ref, probe);
    // tmux 3.3a shows pane_dead before reaping and can lose the SIGCHLD (the status then waits for the
    // next child exit, measured ~20 % of quick exits); a run-shell job's exit makes it run waitpid again.
    for (let i = 0; i < 3 && row?.dead && row.deadStatus === null && row.deadSignal === null; i++) {
      row = await this.paneRow(ref, A.chain(A.runShellArgs("true"), probe));
    }
    if (!row?.dead) return null;
    return { exitCode: row.deadSignal === null ? row.deadStatus : null, signal: row.deadSignal };
  }

  /** One PANE_FORMAT row for this pane (the last line printed by `args`), or null. */
  private async paneRow(ref: PaneRef, args: string[]): Promise<P.PaneRow | null> {
    const run = await runTmux(ref.server, args, this.exec);
    const row = run.exitCode === 0 ? P.parsePaneRow(run.stdout.trim().split("\n").pop() ?? "") : null;
    return row?.paneId === ref.paneId ? row : null;
  }

  /**
   * load-buffer + paste-buffer in one call. The paste is guarded by if-shell because tmux 3.3a's
   * server crashes (SIGSEGV) when pasting into a dead pane (fixed upstream in tmux PR #3830).
   */
  async send(ref: PaneRef, text: string, opts: { enter?: boolean } = {}): Promise<void> {
    const p = ref.paneId;
    const buf = `muster-${randomBytes(8).toString("hex")}`;
    const cmds: string[][] = [];
    if (text !== "") {
      const paste = `paste-buffer -p -r -d -b ${buf} -t ${p}`;
      cmds.push(A.loadBufferArgs(buf));
      cmds.push(
        A.ifFormatArgs(p, "#{pane_dead}", `delete-buffer -b ${buf} ; display-message -p dead`, paste),
      );
    }
    if (opts.enter) cmds.push(A.sendKeysArgs(p, ["Enter"]));
    if (cmds.length === 0) return;
    const args = A.chain(...cmds);
    const run = await runTmux(ref.server, args, { ...this.exec, ...(text === "" ? {} : { input: text }) });
    if (run.exitCode !== 0) {
      if (text !== "") await runTmux(ref.server, A.deleteBufferArgs(buf), this.exec).catch(() => undefined);
      throw failure(ref, "cannot send", args, run);
    }
    if (run.stdout.trim() === "dead") throw new MusterError("not_running", `pane ${p} has exited; not sent`);
  }

  /** The last `lines` non-blank-trailing lines of the pane (history included), at most 256 KiB. */
  async capture(ref: PaneRef, opts: { lines?: number } = {}): Promise<string> {
    const n = P.clampCaptureLines(opts.lines);
    const args = A.capturePaneArgs(ref.paneId, n);
    const run = await runTmux(ref.server, args, this.exec);
    if (run.exitCode !== 0) throw failure(ref, "cannot capture", args, run);
    return P.captureTail(run.stdout, n);
  }

  /** Kills the pane; a pane (or server) that is already gone is not an error. */
  async kill(ref: PaneRef): Promise<void> {
    const args = A.killPaneArgs(ref.paneId);
    const run = await runTmux(ref.server, args, this.exec);
    if (run.exitCode !== 0 && P.classifyTmuxError(run.stderr) !== "dead") throw tmuxFailure(args, run);
  }

  /**
   * Kills muster's detached session when its placeholder (`muster`, idle `cat`) is its only window, so a
   * demo or the removal of the last child leaves no tmux session behind. The check and the kill are one
   * tmux command (if-shell -F runs on the server, between other clients' commands): a spawn's new window
   * either counts, or finds the session gone and creates it again (openPane) — never created and then killed.
   */
  async tidy(): Promise<void> {
    const session = this.config.session;
    // The kill is a tmux command string: only a name muster makes goes into it.
    if (session === null || !A.isPlainSessionName(session)) return;
    await runTmux(this.config.server, A.killSessionIfOnlyPlaceholderArgs(session), this.exec);
  }

  /** Selects the pane in the calling client; only possible from inside tmux on the pane's server. */
  async focus(ref: PaneRef): Promise<void> {
    const inside = P.parseTmuxEnv(this.config.env.TMUX);
    const caller = this.config.env.TMUX_PANE;
    const hint = `attach with: ${this.attachCommand(ref).join(" ")}`;
    if (!inside || !caller) throw new MusterError("unsupported", `not inside tmux, cannot focus; ${hint}`);
    const probe = A.chain(
      ["display-message", "-p", "#{pid}"],
      A.displayMessageArgs(caller, "#{session_id}"),
      A.displayMessageArgs(ref.paneId, "#{session_id}"),
    );
    const run = await runTmux(ref.server, probe, this.exec);
    if (run.exitCode !== 0) throw failure(ref, "cannot focus", probe, run);
    const [pid, callerSession, paneSession] = run.stdout.split("\n");
    if (Number(pid) !== inside.serverPid) {
      throw new MusterError("unsupported", `pane ${ref.paneId} is on another tmux server; ${hint}`);
    }
    if (!paneSession) throw gone(ref, "cannot focus");
    await tmux(ref.server, A.focusPaneArgs(ref.paneId, callerSession !== paneSession), this.exec);
  }

  /** `tmux [-L|-S] attach-session -t <session> ; select-window -t %N ; select-pane -t %N`, run where its place runs tmux. */
  attachCommand(ref: PaneRef): string[] {
    const attach = A.chain(A.attachSessionArgs(ref.session), A.focusPaneArgs(ref.paneId, false));
    const argv = [tmuxBin(this.config.env), ...A.serverArgs(ref.server), ...attach];
    // The tmux of another place is reached the way that place runs a person's commands.
    return this.place.interactive?.(argv) ?? argv;
  }

  /** A session of the viewer's own in the pane's group, on the pane's window: see ViewOptions. */
  viewCommand(ref: PaneRef, opts: ViewOptions): string[] {
    const view = A.chain(
      ...A.viewSessionArgs(ref.session, opts.viewer, opts.input),
      A.selectWindowArgs(ref.paneId),
    );
    const argv = [tmuxBin(this.config.env), ...A.serverArgs(ref.server), ...view];
    return this.place.interactive?.(argv) ?? argv;
  }

  /**
   * `display-popup -E` over the caller's client: a child's pane (its attach command, run with TMUX unset
   * so tmux allows the nested client) or a command. Needs a client: from inside tmux. tmux answers
   * when the popup closes, so this resolves then.
   */
  async popup(target: PopupTarget, opts: PopupOptions = {}): Promise<void> {
    const inside = P.parseTmuxEnv(this.config.env.TMUX);
    if (!inside || !this.config.env.TMUX_PANE)
      throw new MusterError("unsupported", "a popup needs a tmux client: run this inside tmux");
    const run =
      "pane" in target
        ? { argv: ["env", "-u", "TMUX", ...this.attachCommand(target.pane as PaneRef)] }
        : { argv: target.argv, ...(target.cwd ? { cwd: target.cwd } : {}) };
    if (run.argv.length === 0) throw new MusterError("invalid_argument", "popup: empty argv");
    const args = A.displayPopupArgs({ ...run, ...opts, target: this.config.env.TMUX_PANE });
    // The client is on the caller's server, whichever server this backend's panes are on.
    const server = { flag: "-S" as const, value: inside.socketPath };
    const r = await runTmux(server, args, { ...this.exec, timeoutMs: POPUP_OPEN_MS, held: true });
    if (r.exitCode !== 0) throw tmuxFailure(args, r);
  }

  /** A split needs the caller's own pane ($TMUX_PANE in its tmux server); elsewhere openPane opens a window. */
  placementNote(placement: Placement): string | undefined {
    if (placement !== "split" || (this.config.session === null && this.config.env.TMUX_PANE))
      return undefined;
    return `--split needs to run inside tmux (TMUX_PANE of this server): opened a background window in session "${this.config.session}" instead`;
  }

  /** Whether this spawn splits the caller's pane ($TMUX_PANE in its tmux server) rather than opening a window. */
  private splits(opts: SpawnPaneOptions): boolean {
    return this.config.session === null && !!this.config.env.TMUX_PANE && opts.placement === "split";
  }

  /** new-window running `run`, kept on exit and named, in one tmux command; prints SPAWN_FORMAT. */
  private async openWindow(opts: SpawnPaneOptions, run: A.StartCommand): Promise<string> {
    const { server, session } = this.config;
    const target = session === null ? `${await this.callerSession()}:` : `=${session}:`;
    // A name no other window has, for the commands after new-window to find it by until it takes its own.
    const mark = `muster-new-${randomBytes(6).toString("hex")}`;
    const open = A.newWindowArgs({ format: SPAWN_FORMAT, ...run, target, name: mark });
    const args = A.chain(open, ...A.keepMarkedWindowArgs(`${target}=${mark}`, opts.name, opts.title));
    // A place made for one child has a server of its own that this spawn starts: the session and the child's
    // window in one command there (each is a round trip into a container or a Pod), not a new-window that
    // fails first. A session already there (a resume) is the usual way below.
    if (session !== null && this.place.ownTerminal) {
      const together = A.chain(sessionArgs(session), args);
      const made = await runTmux(server, together, { ...this.exec, isolate: true });
      if (made.exitCode === 0) return made.stdout;
      if (!/duplicate session/.test(made.stderr)) throw await this.undoWindow(together, made);
    }
    const first = await runTmux(server, args, this.exec);
    if (first.exitCode === 0) return first.stdout;
    if (session === null || !P.isMissingSession(first.stderr)) throw await this.undoWindow(args, first);
    // Many spawns at once on a server not yet started (a wide workflow's first steps): one of them creates
    // the session while the others wait for it, rather than each starting the server at once.
    this.creating ??= this.ensureSession(session).finally(() => {
      this.creating = undefined;
    });
    await this.creating;
    const again = await runTmux(server, args, this.exec);
    if (again.exitCode === 0) return again.stdout;
    throw await this.undoWindow(args, again);
  }

  /**
   * The error of a failed openWindow command; a window it made before a later command of it failed (its
   * pane id printed) is killed, so a failed spawn leaves no pane behind.
   */
  private async undoWindow(args: string[], run: TmuxRun): Promise<MusterError> {
    const paneId = run.stdout.trim().split("\t")[0] ?? "";
    if (/^%\d+$/.test(paneId))
      await runTmux(this.config.server, A.killPaneArgs(paneId), this.exec).catch(() => undefined);
    return tmuxFailure(args, run);
  }

  /** The session being created by one of this backend's spawns, which the others wait for. */
  private creating: Promise<void> | undefined;

  /** Creates the detached session with a placeholder window `muster` (keeps it alive when children die). */
  private async ensureSession(session: string): Promise<void> {
    const args = sessionArgs(session);
    const run = await runTmux(this.config.server, args, { ...this.exec, isolate: true });
    // Another process may have created it between our new-window and new-session.
    if (run.exitCode !== 0 && !/duplicate session/.test(run.stderr)) throw tmuxFailure(args, run);
  }

  /** Session id (`$N`) of $TMUX_PANE, looked up once. */
  private async callerSession(): Promise<string> {
    if (this.callerSessionId) return this.callerSessionId;
    const pane = this.config.env.TMUX_PANE ?? "";
    const out = await tmux(this.config.server, A.displayMessageArgs(pane, "#{session_id}"), this.exec);
    this.callerSessionId = out.trim();
    if (this.callerSessionId) return this.callerSessionId;
    throw new MusterError("mux_unavailable", `tmux pane ${pane} ($TMUX_PANE) not found on its server`);
  }
}

const gone = (ref: PaneRef, what: string): MusterError =>
  new MusterError("not_running", `${what}: tmux pane ${ref.paneId} no longer exists`);

/** not_running when tmux says the pane or server is gone, else mux_unavailable with tmux's words. */
const failure = (ref: PaneRef, what: string, args: string[], run: TmuxRun): MusterError =>
  P.classifyTmuxError(run.stderr) === "dead" ? gone(ref, what) : tmuxFailure(args, run);

/** Checks what tmux would get wrong silently (a missing cwd: tmux starts elsewhere) or refuse. */
function validateSpawn(o: SpawnPaneOptions, here: boolean): A.StartCommand {
  const run = { cwd: o.cwd, env: o.env ?? {}, argv: o.argv };
  const problem = A.startCommandProblem(run, {
    name: o.name,
    ...(o.title !== undefined ? { title: o.title } : {}),
  });
  if (problem) throw new MusterError("invalid_argument", `spawn: ${problem}`);
  // A folder on another machine is its place's to check (Place.workdir), not this disk's.
  if (!here) return run;
  let isDir = false;
  try {
    isDir = isAbsolute(o.cwd) && statSync(o.cwd).isDirectory();
  } catch {}
  if (!isDir)
    throw new MusterError("invalid_argument", `spawn: cwd is not an existing absolute directory: ${o.cwd}`);
  return run;
}
