/**
 * The embedded pty backend: no multiplexer. Each pane is a holder process (holder.ts) that runs the
 * pane's program under a pseudo-terminal and serves a Unix socket; `muster attach` connects a terminal to
 * it (attach.ts). For machines without tmux or Zellij, or by choice (MUSTER_BACKEND=pty).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { localPlace } from "../../place/local/index.js";
import { LOCAL_PLACE, type Place } from "../../place/place.js";
import { nodePty } from "../../util/node-pty.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { hostAlive } from "../../util/proc.js";
import type {
  Backend,
  DeadStatus,
  HostControl,
  Liveness,
  OtherPaneRef,
  Placement,
  SpawnPaneOptions,
} from "../backend.js";
import { localHostControl } from "../local-host.js";
import { captureTail, clampCaptureLines } from "../tmux/parse.js";
import { checkAck, request } from "./client.js";
import { FRAME, jsonFrame } from "./protocol.js";
import { paneSocketPath } from "./socket-path.js";

export const PTY_BACKEND = "pty";
// One CommonJS file (scripts/bundle.mjs): the holder is on every pty pane's start-up path.
const HOLDER_JS = path.join(PACKAGE_ROOT, "dist", "mux", "pty", "holder.cjs");
export const ATTACH_JS = path.join(PACKAGE_ROOT, "dist", "mux", "pty", "attach.js");
const ID = /^pty-[0-9a-f]{12}$/;
/** A fresh pane's size until a viewer brings its own (tmux's default-size is 80x24; agents print wider). */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
const READY_TIMEOUT_MS = 15_000;
const KILL_WAIT_MS = 3000;
/** After a spawn, the next spare starts this much later: the new child's own start goes first. */
const REPLENISH_DELAY_MS = 100;

export interface PtyPaneData {
  /** The holder's pid; its command line names the pane's folder, which guards against pid reuse. */
  pid: number;
  /** The program's pid (the pty's session leader, so also its process group). */
  childPid: number;
  socket: string;
}

type PtyRef = OtherPaneRef & { data: PtyPaneData };

/** A holder process this backend started, before and while it is handed its spec. */
interface Holder {
  id: string;
  dir: string;
  proc: ChildProcess;
  exited: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function createPtyBackend(ctx: {
  env: NodeJS.ProcessEnv;
  stateDir: string;
  place?: Place;
}): PtyBackend {
  // Its holders are processes of this one's machine (spawned, with a Unix socket in the state root).
  if (ctx.place && ctx.place.name !== LOCAL_PLACE)
    throw new MusterError(
      "unsupported",
      `the pty backend runs its children on this machine only, not in place "${ctx.place.name}"; use tmux there`,
    );
  return new PtyBackend(ctx.env, ctx.stateDir);
}

export class PtyBackend implements Backend<PtyRef> {
  readonly name = PTY_BACKEND;
  readonly place: Place = localPlace;
  /** Hosts are local processes; how one ended is what its holder recorded (exit.json). */
  readonly host: HostControl = {
    ...localHostControl,
    exitStatus: async (h) =>
      h.pane?.backend === PTY_BACKEND ? this.deadStatus(h.pane as unknown as PtyRef) : null,
  };

  private spare: Holder | null = null;
  private spawned = 0;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly root: string,
  ) {}

  /**
   * node-pty's version; throws mux_unavailable when its native part is missing. The core asks this once
   * before its first spawn, so it also starts a spare holder: Node's start then overlaps the spawn's own
   * work instead of delaying the child (the holder loads node-pty itself: a broken build fails the spawn).
   */
  async version(): Promise<string> {
    const found = nodePty();
    if ("problem" in found) throw new MusterError("mux_unavailable", found.problem);
    this.prestart();
    return `node-pty ${found.version}`;
  }

  /** Starts a spare holder unless one waits already (best effort: a spawn starts its own without one). */
  private prestart(): void {
    if (this.spare) return;
    try {
      this.spare = this.startHolder();
    } catch {
      this.spare = null;
    }
  }

  /**
   * A holder waiting for its spec on stdin, in a folder of its own. Nothing of it keeps this process
   * alive: a spare nobody uses sees stdin close when this process exits, and leaves.
   */
  private startHolder(): Holder {
    const id = `pty-${randomBytes(6).toString("hex")}`;
    const dir = this.dirOf(id);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const log = fs.openSync(path.join(dir, "holder.log"), "a", 0o600);
    let proc: ChildProcess;
    try {
      // Its own session (no terminal of ours), no environment of ours: the program's comes with the spec.
      proc = spawn(process.execPath, [HOLDER_JS, dir], {
        cwd: dir,
        detached: true,
        env: {},
        stdio: ["pipe", "pipe", log],
      });
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    } finally {
      fs.closeSync(log);
    }
    const h: Holder = { id, dir, proc, exited: false };
    proc.once("exit", () => {
      h.exited = true;
      // A spare that died unused (a used one's folder is its pane's, kept for exit.json and screen.txt).
      if (this.spare !== h) return;
      this.spare = null;
      fs.rmSync(dir, { recursive: true, force: true });
    });
    proc.once("error", () => {
      h.exited = true;
    });
    proc.stdin?.on("error", () => undefined);
    proc.unref();
    (proc.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    (proc.stdout as unknown as { unref?: () => void } | null)?.unref?.();
    return h;
  }

  /** Hands argv to a holder (the spare, else a new one) and returns once its socket listens, or says why not. */
  async spawn(opts: SpawnPaneOptions): Promise<PtyRef> {
    if (opts.argv.length === 0) throw new MusterError("invalid_argument", "spawn: empty argv");
    if (!path.isAbsolute(opts.cwd) || !fs.statSync(opts.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new MusterError(
        "invalid_argument",
        `spawn: cwd is not an existing absolute directory: ${opts.cwd}`,
      );
    // A spare that died while it waited (killed, or its idle time ran out) is dropped, never retried
    // after the spec went out: a holder that failed later may have started the program already.
    let spare = this.spare;
    this.spare = null;
    if (spare && (spare.exited || !spare.proc.pid || !hostAlive(spare.proc.pid, spare.dir))) {
      fs.rmSync(spare.dir, { recursive: true, force: true });
      spare = null;
    }
    this.spawned += 1;
    const ref = await this.start(spare ?? this.startHolder(), opts);
    // A process that spawns again and again (a server, a workflow) keeps the next holder warm.
    if (this.spawned > 1) setTimeout(() => this.prestart(), REPLENISH_DELAY_MS).unref();
    return ref;
  }

  /** Hands the spec to holder `h` and waits for its socket; on failure the holder and its folder go. */
  private async start(h: Holder, opts: SpawnPaneOptions): Promise<PtyRef> {
    try {
      const socket = paneSocketPath(h.dir, h.id, this.env);
      const spec = {
        argv: opts.argv,
        cwd: opts.cwd,
        env: paneEnv(this.env, opts.env),
        ...DEFAULT_SIZE,
        socket,
      };
      const ready = readReady(h.proc, h.dir);
      h.proc.stdin?.end(`${JSON.stringify(spec)}\n`);
      const childPid = await ready;
      return { backend: PTY_BACKEND, id: h.id, data: { pid: h.proc.pid as number, childPid, socket } };
    } catch (e) {
      if (h.proc.pid) signal(h.proc.pid, "SIGKILL");
      fs.rmSync(h.dir, { recursive: true, force: true });
      throw e instanceof MusterError
        ? e
        : new MusterError("mux_unavailable", `pty: cannot start a pane: ${(e as Error).message}`, {
            cause: e,
          });
    }
  }

  /** Ends the spare holder, if one waits (for a process that goes on living without spawning). */
  close(): void {
    const h = this.spare;
    this.spare = null;
    if (h && !h.exited) h.proc.stdin?.end();
  }

  /** Alive while its holder runs: the holder exits right after its program does. */
  async alive(ref: PtyRef): Promise<Liveness> {
    return this.holderAlive(ref) ? "alive" : "dead";
  }

  async aliveMany(refs: PtyRef[]): Promise<Map<string, Liveness>> {
    return new Map(refs.map((r) => [r.id, this.holderAlive(r) ? "alive" : "dead"] as const));
  }

  /** How the program ended, as its holder recorded it; null while it runs or when the holder was killed. */
  async deadStatus(ref: PtyRef): Promise<DeadStatus | null> {
    if (this.holderAlive(ref)) return null;
    try {
      const st = JSON.parse(fs.readFileSync(path.join(this.dirOf(ref.id), "exit.json"), "utf8"));
      return { exitCode: st.exitCode ?? null, signal: st.signal ?? null };
    } catch {
      return null;
    }
  }

  /** Types text into the pane (bracketed paste if the program asked for it); `enter` presses Enter after. */
  async send(ref: PtyRef, text: string, opts: { enter?: boolean } = {}): Promise<void> {
    if (text === "" && !opts.enter) return;
    if (!this.holderAlive(ref))
      throw new MusterError("not_running", `pty pane ${ref.id} has exited; not sent`);
    const answer = await request(
      this.socketOf(ref),
      ref.id,
      jsonFrame(FRAME.PASTE, { text, enter: !!opts.enter }),
      ref.data.pid,
    );
    checkAck(answer, ref.id);
  }

  /** The screen and scrollback as the holder's terminal model renders them; the last screen once it exited. */
  async capture(ref: PtyRef, opts: { lines?: number } = {}): Promise<string> {
    const n = clampCaptureLines(opts.lines);
    if (this.holderAlive(ref)) {
      try {
        const f = await request(this.socketOf(ref), ref.id, jsonFrame(FRAME.CAPTURE, {}), ref.data.pid);
        if (f.type === FRAME.TEXT) return captureTail(f.payload.toString("utf8"), n);
      } catch (e) {
        if (!(e instanceof MusterError && e.code === "not_running")) throw e;
      }
    }
    try {
      return captureTail(fs.readFileSync(path.join(this.dirOf(ref.id), "screen.txt"), "utf8"), n);
    } catch {
      throw new MusterError("not_running", `pty pane ${ref.id} no longer exists`);
    }
  }

  /** Closes the pane: its program is hung up (SIGHUP), its group killed if it stays; then its folder goes. */
  async kill(ref: PtyRef): Promise<void> {
    if (this.holderAlive(ref)) {
      signal(ref.data.pid, "SIGTERM");
      const end = Date.now() + KILL_WAIT_MS;
      while (this.holderAlive(ref) && Date.now() < end) await sleep(20);
      if (this.holderAlive(ref)) {
        signal(ref.data.pid, "SIGKILL");
        signal(-ref.data.childPid, "SIGKILL");
      }
    }
    fs.rmSync(this.dirOf(ref.id), { recursive: true, force: true });
    fs.rmSync(this.socketOf(ref), { force: true });
  }

  /** There is no multiplexer to bring a pane forward in: say so, and how to see it instead. */
  async focus(ref: PtyRef): Promise<void> {
    throw new MusterError(
      "unsupported",
      `focus needs a multiplexer (tmux or Zellij); pane ${ref.id} runs in muster's own pty backend: attach to it with muster attach`,
    );
  }

  /** `node attach.js <socket> <pane id> <holder pid>`: a raw terminal client of the holder (detach: Ctrl-\). */
  attachCommand(ref: PtyRef): string[] {
    return [process.execPath, ATTACH_JS, this.socketOf(ref), ref.id, String(ref.data.pid)];
  }

  placementNote(placement: Placement): string | undefined {
    return placement === "split"
      ? "the pty backend has no screen to split: started a detached pane (see it with muster attach)"
      : undefined;
  }

  /** The pane's folder, from its id (checked: a registry entry's id never walks out of the state dir). */
  private dirOf(id: string): string {
    if (!ID.test(id)) throw new MusterError("invalid_id", `not a pty pane id: ${JSON.stringify(id)}`);
    return path.join(this.root, id);
  }

  private socketOf(ref: PtyRef): string {
    const s = ref.data?.socket;
    if (typeof s !== "string" || !path.isAbsolute(s))
      throw new MusterError("invalid_config", `pty pane ${ref.id}: its record has no socket path`);
    return s;
  }

  private holderAlive(ref: PtyRef): boolean {
    const pid = ref.data?.pid;
    return typeof pid === "number" && pid > 0 && hostAlive(pid, this.dirOf(ref.id));
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {}
}

/** The pane's environment: the caller's plus the pane's own, without the caller's multiplexer. */
function paneEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...env, ...extra })) if (typeof v === "string") out[k] = v;
  // A pane here is not a pane of the caller's tmux: its own children must not think so.
  delete out.TMUX;
  delete out.TMUX_PANE;
  return out;
}

/** The holder's ready line ({childPid}), or why it never came (its log says what went wrong). */
function readReady(holder: ChildProcess, dir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      clearTimeout(timer);
      holder.off("exit", onExit);
      holder.off("error", onError);
      holder.stdout?.off("data", onData);
    };
    const fail = (why: string) => {
      stop();
      let log = "";
      try {
        log = fs.readFileSync(path.join(dir, "holder.log"), "utf8").trim().split("\n").slice(-3).join(" / ");
      } catch {}
      reject(new MusterError("mux_unavailable", `pty: the pane's holder ${why}${log ? `: ${log}` : ""}`));
    };
    const onExit = (code: number | null, sig: NodeJS.Signals | null) =>
      fail(`exited at once (${sig ?? `exit code ${code}`})`);
    const onError = (e: Error) => fail(`could not run (${e.message})`);
    const onData = (d: Buffer) => {
      out += d.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      stop();
      holder.stdout?.destroy();
      let pid = Number.NaN;
      try {
        pid = Number((JSON.parse(out.slice(0, nl)) as { childPid?: unknown }).childPid);
      } catch {}
      if (Number.isInteger(pid) && pid > 0) resolve(pid);
      else fail("sent no program pid");
    };
    // A holder that waited as a spare may have been gone since: its exit was seen already.
    if (holder.exitCode !== null || holder.signalCode !== null) return fail("had exited");
    timer = setTimeout(() => fail(`did not start within ${READY_TIMEOUT_MS / 1000}s`), READY_TIMEOUT_MS);
    holder.once("exit", onExit);
    holder.once("error", onError);
    holder.stdout?.on("data", onData);
  });
}
