/**
 * The Zellij Backend: each child host runs in a Zellij pane, reached through `zellij --session <s> action …`.
 * Written from Zellij's documented CLI (0.44) and peers' verified use of it; untested against a real Zellij
 * here (none can be installed): test/fixtures/zellij-standin.mjs plays Zellij in the tests.
 */
import { mkdirSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { MusterError } from "../../base/errors.js";
import { setting } from "../../base/settings/resolve.js";
import { localPlace } from "../../place/local/index.js";
import type { Place } from "../../place/place.js";
import { withFileLock } from "../../util/lock.js";
import type {
  Backend,
  DeadStatus,
  HostControl,
  Liveness,
  OtherPaneRef,
  PaneRef,
  Placement,
  PopupOptions,
  PopupTarget,
  SpawnPaneOptions,
} from "../backend.js";
import { captureTail, clampCaptureLines } from "../tmux/parse.js";
import * as A from "./argv.js";
import { runZellij, type ZellijClient, type ZellijRun, zellij, zellijBin, zellijFailure } from "./exec.js";
import * as P from "./parse.js";

export interface ZellijPaneRef extends OtherPaneRef {
  backend: "zellij";
  data: { session: string; pane: number };
}

// write-chars takes the text as one argv word (the OS caps one at 128 KiB).
const MAX_SEND_BYTES = 96 * 1024;
const DUMP_TIMEOUT_MS = 10_000;
// A popup stays open as long as a person keeps it: poll its pane until it is gone.
const POPUP_POLL_MS = 500;
const SESSION = /^[A-Za-z0-9._-]{1,64}$/;

/** The session children go to: the caller's inside Zellij, else MUSTER_ZELLIJ_SESSION or `muster` (detached). */
export function zellijSession(env: NodeJS.ProcessEnv): { name: string; inside: boolean } {
  if (env.ZELLIJ !== undefined && env.ZELLIJ_SESSION_NAME)
    return { name: env.ZELLIJ_SESSION_NAME, inside: true };
  return { name: setting(env, "zellijSession"), inside: false };
}

/** A ref as read back from a registry, checked before any of it reaches an argv. */
function checkRef(ref: PaneRef): ZellijPaneRef {
  const d = (ref as OtherPaneRef).data as Partial<ZellijPaneRef["data"]> | undefined;
  if (ref.backend !== "zellij" || !d || typeof d.session !== "string" || !Number.isInteger(d.pane))
    throw new MusterError("invalid_argument", `not a zellij pane: ${JSON.stringify(ref).slice(0, 200)}`);
  return ref as ZellijPaneRef;
}

export class ZellijBackend implements Backend<ZellijPaneRef> {
  readonly name = "zellij";
  readonly host: HostControl;
  private readonly session: { name: string; inside: boolean };
  private sessionReady = false;
  /** How its client runs: the caller's environment, through the place. */
  private readonly client: ZellijClient;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly stateDir: string,
    readonly place: Place = localPlace,
  ) {
    this.client = { env, place };
    this.host = {
      ...place.host,
      exitStatus: async (h) =>
        h.pane?.backend === "zellij" ? this.deadStatus(checkRef(h.pane as PaneRef)).catch(() => null) : null,
    };
    this.session = zellijSession(env);
    if (!SESSION.test(this.session.name))
      throw new MusterError(
        "invalid_argument",
        `zellij session name ${JSON.stringify(this.session.name)} is not [A-Za-z0-9._-]`,
      );
  }

  async version(): Promise<string> {
    const out = await zellij(A.versionArgs(), this.client);
    const v = P.parseVersion(out);
    if (!v)
      throw new MusterError("mux_unavailable", `unexpected \`zellij --version\` output: ${out.slice(0, 80)}`);
    return v;
  }

  /**
   * new-pane with the command; its id is the terminal pane that appeared (list-panes before and after).
   * Spawns into one session are serialised by a file lock so the diff names exactly one new pane.
   */
  async spawn(opts: SpawnPaneOptions): Promise<ZellijPaneRef> {
    const env = opts.env ?? {};
    const problem = A.paneCommandProblem(opts.argv, env);
    if (problem) throw new MusterError("invalid_argument", `spawn: ${problem}`);
    if (!isAbsolute(opts.cwd) || !statSync(opts.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new MusterError(
        "invalid_argument",
        `spawn: cwd is not an existing absolute directory: ${opts.cwd}`,
      );
    await this.ensureSession();
    const session = this.session.name;
    const command = A.paneCommand(opts.argv, env);
    // A split beside the caller's pane inside Zellij; otherwise a tab of its own, as a tmux window.
    const split = opts.placement === "split" && this.session.inside;
    const open = split
      ? A.newPaneArgs({ name: opts.name, cwd: opts.cwd, command, direction: "right" })
      : A.newTabArgs({ name: opts.name, cwd: opts.cwd, command });
    const args = A.actionArgs(session, open);
    mkdirSync(this.stateDir, { recursive: true, mode: 0o700 });
    const pane = await withFileLock(join(this.stateDir, `spawn-${session}`), async () => {
      const before = (await this.panes(session)) ?? [];
      // new-tab moves the caller's focus to the new tab: note where it was, to give it back.
      const back = !split && this.session.inside ? await this.focusedTab(session) : null;
      const out = await zellij(args, this.client);
      if (back !== null)
        await runZellij(A.actionArgs(session, A.goToTabArgs(back)), this.client).catch(() => null);
      const after = await this.panes(session);
      // new-pane prints the pane's id; new-tab the tab's, which must not be taken for a pane's.
      return after ? P.newPaneOf(before, after, opts.name, split ? P.parseNewPaneId(out) : null) : null;
    });
    if (pane === null)
      throw new MusterError(
        "mux_unavailable",
        `zellij ${open[0]}: cannot tell which pane it opened in session ${session}`,
      );
    return { backend: "zellij", id: `terminal_${pane}`, data: { session, pane } };
  }

  async alive(ref: ZellijPaneRef): Promise<Liveness> {
    return (await this.aliveMany([ref])).get(ref.id) ?? "unknown";
  }

  /** One list-panes per session: alive while a terminal pane with the id runs; failures are "unknown". */
  async aliveMany(refs: ZellijPaneRef[]): Promise<Map<string, Liveness>> {
    const result = new Map<string, Liveness>();
    const sessions = [...new Set(refs.map((r) => checkRef(r).data.session))];
    await Promise.all(
      sessions.map(async (s) => {
        const rows = await this.panes(s).catch(() => null);
        for (const r of refs.filter((x) => x.data.session === s)) {
          const row = rows?.find((p) => p.id === r.data.pane);
          result.set(r.id, rows ? (row && !row.exited ? "alive" : "dead") : "unknown");
        }
      }),
    );
    return result;
  }

  /** A pane Zellij keeps after its command ended (no --close-on-exit) shows as exited, with its status. */
  async deadStatus(ref: ZellijPaneRef): Promise<DeadStatus | null> {
    const row = await this.row(checkRef(ref));
    return row?.exited ? { exitCode: row.exitStatus, signal: null } : null;
  }

  /** write-chars (byte-exact: `--` keeps a leading `-`), then the Enter byte when asked. */
  async send(ref: ZellijPaneRef, text: string, opts: { enter?: boolean } = {}): Promise<void> {
    const { session, pane } = checkRef(ref).data;
    if (Buffer.byteLength(text) > MAX_SEND_BYTES)
      throw new MusterError(
        "invalid_argument",
        `zellij send: text over ${MAX_SEND_BYTES} bytes; use muster send`,
      );
    const row = await this.row(ref);
    if (!row || row.exited)
      throw new MusterError("not_running", `zellij pane ${ref.id} has exited; not sent`);
    if (text !== "") await zellij(A.actionArgs(session, A.writeCharsArgs(pane, text)), this.client);
    if (opts.enter) await zellij(A.actionArgs(session, A.enterArgs(pane)), this.client);
  }

  /** dump-screen --full to stdout, then the last `lines` lines. */
  async capture(ref: ZellijPaneRef, opts: { lines?: number } = {}): Promise<string> {
    const { session, pane } = checkRef(ref).data;
    const args = A.actionArgs(session, A.dumpScreenArgs(pane));
    const run = await runZellij(args, this.client, DUMP_TIMEOUT_MS);
    if (run.exitCode !== 0) throw await this.failure(ref, "cannot capture", args, run);
    const n = clampCaptureLines(opts.lines);
    return captureTail(run.stdout, n);
  }

  /** close-pane; a pane (or session) that is already gone is not an error. */
  async kill(ref: ZellijPaneRef): Promise<void> {
    const { session, pane } = checkRef(ref).data;
    const args = A.actionArgs(session, A.closePaneArgs(pane));
    const run = await runZellij(args, this.client);
    if (run.exitCode !== 0 && (await this.alive(ref)) !== "dead") throw zellijFailure(args, run);
  }

  /** focus-pane-id; only inside Zellij, in the pane's own session. */
  async focus(ref: ZellijPaneRef): Promise<void> {
    const { session, pane } = checkRef(ref).data;
    const hint = `attach with: ${this.attachCommand(ref).join(" ")}`;
    if (!this.session.inside)
      throw new MusterError("unsupported", `not inside zellij, cannot focus; ${hint}`);
    if (session !== this.session.name)
      throw new MusterError("unsupported", `pane ${ref.id} is in zellij session ${session}; ${hint}`);
    const args = A.actionArgs(session, A.focusPaneArgs(pane));
    const run = await runZellij(args, this.client);
    if (run.exitCode !== 0) throw await this.failure(ref, "cannot focus", args, run);
  }

  attachCommand(ref: ZellijPaneRef): string[] {
    return [zellijBin(this.env), ...A.attachArgs(checkRef(ref).data.session)];
  }

  /**
   * A command in a floating pane of the caller's session (closed when the command ends); resolves when
   * that pane is gone. Zellij cannot show another pane inside a floating one: a child's pane gets focus instead.
   */
  async popup(target: PopupTarget, opts: PopupOptions = {}): Promise<void> {
    if (!this.session.inside)
      throw new MusterError("unsupported", "a popup needs a zellij client: run this inside zellij");
    if ("pane" in target) return this.focus(checkRef(target.pane));
    if (target.argv.length === 0) throw new MusterError("invalid_argument", "popup: empty argv");
    const session = this.session.name;
    const name = opts.title ?? "muster";
    const args = A.actionArgs(
      session,
      A.newPaneArgs({
        name,
        ...(target.cwd ? { cwd: target.cwd } : {}),
        command: target.argv,
        floating: { width: opts.width ?? "90%", height: opts.height ?? "80%" },
        closeOnExit: true,
      }),
    );
    const before = (await this.panes(session)) ?? [];
    const out = await zellij(args, this.client);
    const after = (await this.panes(session)) ?? [];
    const pane = P.newPaneOf(before, after, name, P.parseNewPaneId(out));
    if (pane === null) return;
    const ref: ZellijPaneRef = { backend: "zellij", id: `terminal_${pane}`, data: { session, pane } };
    while ((await this.alive(ref)) === "alive") await new Promise((r) => setTimeout(r, POPUP_POLL_MS));
  }

  placementNote(placement: Placement): string | undefined {
    if (placement !== "split" || this.session.inside) return undefined;
    return `--split needs to run inside zellij: opened a tab in session "${this.session.name}" instead`;
  }

  /** Outside Zellij: the detached session, created once (`attach --create-background` on a live one is harmless). */
  private async ensureSession(): Promise<void> {
    if (this.session.inside || this.sessionReady) return;
    const args = A.createSessionArgs(this.session.name);
    const run = await runZellij(args, this.client);
    // It failed, yet the session may exist (made by another process meanwhile): a session has a pane.
    const live =
      run.exitCode === 0 || ((await this.panes(this.session.name).catch(() => null))?.length ?? 0) > 0;
    if (!live) throw zellijFailure(args, run);
    this.sessionReady = true;
  }

  /** The caller's focused tab (0-based position), or null when Zellij does not say. */
  private async focusedTab(session: string): Promise<number | null> {
    const run = await runZellij(A.actionArgs(session, A.currentTabInfoArgs()), this.client).catch(() => null);
    return run?.exitCode === 0 ? P.parseTabPosition(run.stdout) : null;
  }

  /** The session's terminal panes ([] once the session is gone); null when Zellij gives no answer to go by. */
  private async panes(session: string): Promise<P.ZellijPane[] | null> {
    const args = A.actionArgs(session, A.listPanesArgs());
    const run = await runZellij(args, this.client);
    if (run.exitCode !== 0) return P.isSessionGone(`${run.stderr}\n${run.stdout}`) ? [] : null;
    return P.parsePaneList(run.stdout);
  }

  private async row(ref: ZellijPaneRef): Promise<P.ZellijPane | null> {
    const rows = await this.panes(ref.data.session);
    return rows?.find((p) => p.id === ref.data.pane) ?? null;
  }

  /** not_running when the pane is gone, else mux_unavailable with zellij's words. */
  private async failure(
    ref: ZellijPaneRef,
    what: string,
    args: string[],
    run: ZellijRun,
  ): Promise<MusterError> {
    if ((await this.alive(ref)) === "dead")
      return new MusterError("not_running", `${what}: zellij pane ${ref.id} no longer exists`);
    return zellijFailure(args, run);
  }
}

export const createZellijBackend = (
  env: NodeJS.ProcessEnv,
  stateDir: string,
  place: Place = localPlace,
): ZellijBackend => new ZellijBackend(env, stateDir, place);
