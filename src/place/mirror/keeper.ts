/**
 * The process that keeps one mirrored child's dir current for as long as its host runs: it starts the
 * place's link (a command on this machine whose stdin/stdout reach a relay next to the far dir: `ssh host
 * node relay-main.js <dir>`, `nsenter … node relay-main.js <dir>`), feeds the mirror over it, and starts
 * the link again when it breaks — the feeder resumes from the mirror's byte cursor, so nothing is lost or
 * read twice. It also serves the far host's run-slot requests (admission-desk.ts). It ends when the child's log records the host's end (after a short linger for the files
 * written last), when the mirror dir is removed, or on SIGTERM.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ADMISSION_FILE } from "../../artifacts/admission.js";
import { NdjsonReader } from "../../artifacts/reader.js";
import { sessionFileOf } from "../../sessions/store.js";
import { AdmissionDesk } from "./admission-desk.js";
import { MirrorFeeder } from "./feeder.js";
import { EVENTS } from "./paths.js";

export interface KeeperOptions {
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Called once, when the first link has caught up (the far dir holds all the host reads at start). */
  onSynced: () => void;
  /** Pause before the first retry of a broken link; it doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** How long the keeper stays after the host's end is recorded (ms). */
  lingerMs?: number;
}

const DIR_CHECK_MS = 2000;

export class MirrorKeeper {
  private readonly feeder: MirrorFeeder;
  /** Run slots asked for by the far host (admission-desk.ts). */
  private readonly desk: AdmissionDesk;
  private readonly reader: NdjsonReader<{ type?: unknown }>;
  private link: ChildProcess | undefined;
  private retry: number;
  private synced = false;
  private stopping: string | undefined;
  private timers: NodeJS.Timeout[] = [];
  private finish!: (why: string) => void;

  constructor(
    private readonly dir: string,
    private readonly linkArgv: string[],
    private readonly opts: KeeperOptions,
  ) {
    this.retry = opts.retryMs ?? 100;
    // The conversation next to the dir is carried too (the relay runs with --session: carry.ts).
    this.feeder = new MirrorFeeder(dir, { seed: true, session: sessionFileOf(dir) });
    this.desk = new AdmissionDesk(dir, opts.env, opts.log);
    // The host's end counts only when recorded after we started (a resumed child's log holds the last one).
    const start = fs.statSync(path.join(dir, EVENTS), { throwIfNoEntry: false })?.size ?? 0;
    this.reader = new NdjsonReader(path.join(dir, EVENTS), undefined, start);
  }

  /** Resolves with why the keeper stopped. */
  run(): Promise<string> {
    const done = new Promise<string>((resolve) => {
      this.finish = resolve;
    });
    this.feeder.on("caught-up", () => {
      this.retry = this.opts.retryMs ?? 100;
      if (!this.synced) {
        this.synced = true;
        this.opts.onSynced();
      }
    });
    this.feeder.on("events", () => this.checkEnd());
    this.feeder.on("inbound", (rel: string) => {
      if (rel === ADMISSION_FILE) this.desk.changed();
    });
    this.feeder.on("closed", (reason: string) => this.linkClosed(reason));
    this.timers.push(
      setInterval(() => {
        if (!fs.existsSync(this.dir)) this.stop("its mirror dir is gone");
      }, DIR_CHECK_MS),
    );
    this.connect();
    return done;
  }

  stop(why: string): void {
    if (this.stopping) return;
    this.stopping = why;
    this.desk.release();
    for (const t of this.timers) clearTimeout(t);
    if (this.feeder.attached) this.feeder.close(why);
    else this.ended();
  }

  private connect(): void {
    if (this.stopping) return;
    if (!fs.existsSync(this.dir)) {
      this.stop("its mirror dir is gone");
      return;
    }
    const [cmd, ...args] = this.linkArgv;
    const link = spawn(cmd!, args, { stdio: ["pipe", "pipe", "pipe"], env: this.opts.env });
    this.link = link;
    link.on("error", (e) => this.opts.log(`mirror link: ${e.message}`));
    link.stdin.on("error", () => {});
    let tail = "";
    link.stderr.on("data", (b: Buffer) => {
      const lines = (tail + b.toString("utf8")).split("\n");
      tail = lines.pop() ?? "";
      for (const l of lines) if (l.trim()) this.opts.log(`far side: ${l}`);
    });
    this.feeder.attach({ readable: link.stdout, writable: link.stdin });
  }

  private linkClosed(reason: string): void {
    const link = this.link;
    this.link = undefined;
    if (link && link.exitCode === null && link.signalCode === null) link.kill("SIGTERM");
    if (this.stopping) {
      this.ended();
      return;
    }
    this.opts.log(`mirror link closed: ${reason}; again in ${this.retry} ms`);
    this.timers.push(setTimeout(() => this.connect(), this.retry));
    this.retry = Math.min(this.retry * 2, this.opts.maxRetryMs ?? 5000);
  }

  private checkEnd(): void {
    let ended: boolean | undefined;
    for (const r of this.reader.readNew()) {
      if (r.type === "child_started") ended = false;
      else if (r.type === "child_exited") ended = true;
    }
    if (ended)
      this.timers.push(
        setTimeout(() => this.stop("the child host's end is recorded"), this.opts.lingerMs ?? 1500),
      );
  }

  private ended(): void {
    this.finish(this.stopping ?? "stopped");
  }
}
