/**
 * The embedded pty backend: no multiplexer. Each pane is a holder process (holder.ts) that runs the
 * pane's program under a pseudo-terminal and serves a Unix socket; `muster attach` connects a terminal to
 * it (attach.ts). For machines without tmux or Zellij, or by choice (MUSTER_BACKEND=pty).
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { localPlace } from "../../place/local/index.js";
import { LOCAL_PLACE, type Place } from "../../place/place.js";
import { nodePty } from "../../util/node-pty.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { hostAlive } from "../../util/proc.js";
import { signalProcess } from "../../util/process-group.js";
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
import { type Holder, launchHolder, startProgram } from "./holder-launch.js";
import { FRAME, jsonFrame } from "./protocol.js";
import { SparePool } from "./spare-pool.js";

export const PTY_BACKEND = "pty";
export const ATTACH_JS = path.join(PACKAGE_ROOT, "dist", "mux", "pty", "attach.js");
const ID = /^pty-[0-9a-f]{12}$/;
const KILL_WAIT_MS = 3000;

export interface PtyPaneData {
  /** The holder's pid; its command line names the pane's folder, which guards against pid reuse. */
  pid: number;
  /** The program's pid (the pty's session leader, so also its process group). */
  childPid: number;
  socket: string;
}

type PtyRef = OtherPaneRef & { data: PtyPaneData };

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

  private readonly spares = new SparePool(() => this.startHolder());

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
    this.spares.prestart();
    return `node-pty ${found.version}`;
  }

  /** Hands argv to a holder (the spare, else a new one) and returns once its socket listens, or says why not. */
  async spawn(opts: SpawnPaneOptions): Promise<PtyRef> {
    if (opts.argv.length === 0) throw new MusterError("invalid_argument", "spawn: empty argv");
    if (!path.isAbsolute(opts.cwd) || !fs.statSync(opts.cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new MusterError(
        "invalid_argument",
        `spawn: cwd is not an existing absolute directory: ${opts.cwd}`,
      );
    const h = this.spares.take();
    const { socket, childPid } = await startProgram(h, opts, this.env);
    this.spares.replenish();
    return { backend: PTY_BACKEND, id: h.id, data: { pid: h.proc.pid as number, childPid, socket } };
  }

  /** A new holder in a pane folder of its own, waiting for its spec. */
  private startHolder(): Holder {
    const id = `pty-${randomBytes(6).toString("hex")}`;
    return launchHolder(id, this.dirOf(id));
  }

  /** Ends the spare holder, if one waits (for a process that goes on living without spawning). */
  close(): void {
    this.spares.close();
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
      signalProcess(ref.data.pid, "SIGTERM");
      const end = Date.now() + KILL_WAIT_MS;
      while (this.holderAlive(ref) && Date.now() < end) await sleep(20);
      if (this.holderAlive(ref)) {
        signalProcess(ref.data.pid, "SIGKILL");
        signalProcess(-ref.data.childPid, "SIGKILL");
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
