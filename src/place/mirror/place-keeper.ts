/**
 * The process that keeps every mirrored child of one place current: it runs the place's one link (a
 * command on this machine whose stdin/stdout reach a relay hub there: `nsenter … node relay-hub-main.js`,
 * `ssh host node relay-hub-main.js`), gives each child a channel of it (channels.ts) and a ChildMirror
 * (keeper.ts), and starts the link again when it breaks: each child's feeder resumes from its own cursor
 * over its new channel. A spawn therefore costs a channel, not a process here and one there. With no child
 * left it waits `idleMs` for a next one, then ends.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { listTargets } from "../../notify/targets.js";
import { ChannelMux } from "./channels.js";
import { ChildMirror } from "./keeper.js";

export interface PlaceKeeperOptions {
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** What this process's command line names, for the run-slot tickets it holds. */
  holder: string;
  /** Called once, when the keeper has had no child for idleMs. */
  onIdle: () => void;
  idleMs?: number;
  /** Pause before a child's first retry of a broken channel; it doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  lingerMs?: number;
}

export interface KeepRequest {
  dir: string;
  /** `restart`: replace the child's mirror and resolve once caught up; `revive`: keep it if nobody does. */
  mode: "restart" | "revive";
  maxRunning: number;
}

interface Kept {
  mirror: ChildMirror;
  retry: number;
  timer: NodeJS.Timeout | undefined;
}

interface Link {
  proc: ChildProcess;
  mux: ChannelMux;
}

export class PlaceKeeper {
  private readonly kept = new Map<string, Kept>();
  private link: Link | undefined;
  private idle: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly linkArgv: string[],
    private readonly opts: PlaceKeeperOptions,
  ) {
    this.armIdle();
  }

  /** The dirs kept now. */
  dirs(): string[] {
    return [...this.kept.keys()];
  }

  /** Keeps `req.dir` (see KeepRequest); resolves when the caller may go on, rejects with why it cannot. */
  async keep(req: KeepRequest): Promise<void> {
    if (this.stopping) throw new Error("the place's keeper is stopping");
    const old = this.kept.get(req.dir);
    if (old && req.mode === "revive") return;
    if (old) await this.drop(old, "replaced by a new run");
    const mirror = new ChildMirror(req.dir, {
      maxRunning: req.maxRunning,
      holder: this.opts.holder,
      // Read for each child, as a host reads them when it starts: the config here, never carried there.
      notify: listTargets(this.opts.env),
      ...(this.opts.lingerMs !== undefined ? { lingerMs: this.opts.lingerMs } : {}),
    });
    const k: Kept = { mirror, retry: this.opts.retryMs ?? 100, timer: undefined };
    this.kept.set(req.dir, k);
    if (this.idle) clearTimeout(this.idle);
    this.idle = undefined;
    const synced = new Promise<void>((resolve, reject) => {
      mirror.once("synced", resolve);
      // A relay that refuses the dir says why in an error frame: the first channel fails for good.
      mirror.on("detached", (why: string) => {
        if (why.startsWith("relay:")) reject(new Error(why));
      });
      mirror.once("ended", (why: string) => reject(new Error(`its mirror ended: ${why}`)));
    });
    mirror.on("synced", () => {
      k.retry = this.opts.retryMs ?? 100;
    });
    mirror.on("detached", (why: string) => this.detached(req.dir, k, why));
    mirror.once("ended", (why: string) => this.ended(req.dir, k, why));
    this.attach(k);
    if (req.mode === "revive") {
      synced.catch(() => {});
      return;
    }
    await synced.catch((e: Error) => {
      mirror.stop(e.message);
      throw e;
    });
  }

  /** Stops every child's mirror and the link. */
  stop(why: string): void {
    this.stopping = true;
    for (const k of this.kept.values()) k.mirror.stop(why);
    this.closeLink();
    if (this.kept.size === 0) this.opts.onIdle();
  }

  private attach(k: Kept): void {
    k.timer = undefined;
    if (k.mirror.stopped) return;
    const link = this.ensureLink();
    const channel = link.mux.openChannel({ dir: k.mirror.dir, session: true });
    if (!k.mirror.attach({ readable: channel, writable: channel })) channel.end();
  }

  private detached(dir: string, k: Kept, why: string): void {
    if (this.kept.get(dir) !== k || k.mirror.stopped) return;
    k.mirror.log(`mirror link closed: ${why}; again in ${k.retry} ms`);
    k.timer = setTimeout(() => this.attach(k), k.retry);
    k.retry = Math.min(k.retry * 2, this.opts.maxRetryMs ?? 5000);
  }

  private ended(dir: string, k: Kept, why: string): void {
    if (k.timer) clearTimeout(k.timer);
    k.mirror.log(`mirror stopped: ${why}`);
    if (this.kept.get(dir) === k) this.kept.delete(dir);
    if (this.kept.size > 0) return;
    if (this.stopping) {
      this.opts.onIdle();
      return;
    }
    this.armIdle();
  }

  private async drop(k: Kept, why: string): Promise<void> {
    const gone = new Promise<void>((resolve) => k.mirror.once("ended", () => resolve()));
    k.mirror.stop(why);
    // ended() has taken it out of the map by now.
    await gone;
  }

  private armIdle(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.kept.size > 0) return;
      this.closeLink();
      this.opts.onIdle();
    }, this.opts.idleMs ?? 10_000);
  }

  private ensureLink(): Link {
    if (this.link && !this.link.mux.closed) return this.link;
    const [cmd, ...args] = this.linkArgv;
    const proc = spawn(cmd!, args, { stdio: ["pipe", "pipe", "pipe"], env: this.opts.env });
    const mux = new ChannelMux(proc.stdout!, proc.stdin!);
    const link: Link = { proc, mux };
    this.link = link;
    proc.on("error", (e) => {
      this.opts.log(`mirror link: ${e.message}`);
      mux.close(`the link did not start: ${e.message}`);
    });
    proc.stdin!.on("error", () => {});
    let tail = "";
    proc.stderr!.on("data", (b: Buffer) => {
      const lines = (tail + b.toString("utf8")).split("\n");
      tail = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) this.opts.log(`far side: ${l}`);
    });
    mux.on("closed", (why: string) => {
      this.opts.log(`mirror link closed: ${why}`);
      if (this.link === link) this.link = undefined;
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    });
    return link;
  }

  private closeLink(): void {
    const link = this.link;
    this.link = undefined;
    if (!link) return;
    link.mux.close("the place's keeper stopped");
    link.proc.stdin!.end();
    if (link.proc.exitCode === null && link.proc.signalCode === null) link.proc.kill("SIGTERM");
  }
}
