/**
 * The near side of the mirror: keeps a local copy of a far artifact dir current over a link to its relay
 * (relay.ts), so every parent-side reader works on local files. Event bytes are appended and the local
 * events.ndjson's size (up to its last whole line) is the cursor: a feeder that crashes, a link that breaks
 * or this machine going down resumes exactly there with a new link (`attach` again) — nothing lost, nothing
 * twice. No fsync: the far log is the durable one, and what a crash here loses is asked for again. Inbound files are written whole
 * (temp + rename), files gone there are removed here, and the outbound files (inbox/, control/, answers/,
 * closing, env.json) are watched and pushed, their removal too.
 *
 * Events: `connected` (the relay answered), `caught-up` (the far side has every outbound file as the link
 * found them, and its first pass is in), `events` (new event bytes are
 * in: the log's size), `inbound` (a far file arrived or went: its path), `closed` (the reason, one line;
 * attach a new link to resume).
 */
import { randomBytes } from "node:crypto";
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureDir, openAppend, writeAll } from "../../util/fsx.js";
import {
  carriedChange,
  checkRel,
  EVENTS,
  listFiles,
  OUTBOUND_DIRS,
  OUTBOUND_TOP,
  readWhole,
  sha256,
  shaOfFile,
  stampOf,
  tailSha,
} from "./paths.js";
import {
  type Frame,
  FrameDecoder,
  FrameWriter,
  type Header,
  PROTOCOL_VERSION,
  ProtocolError,
} from "./protocol.js";
import type { MirrorLink } from "./relay.js";
import { FileReceiver, sendData } from "./transfer.js";

/** What a change in the mirror dir itself may be to the feeder (its own inbound writes are not). */
const OUTBOUND_HINTS = new Set([...OUTBOUND_TOP, ...OUTBOUND_DIRS]);

export interface FeederOptions {
  /** The safety poll of the outbound files (ms); hints come from fs.watch. */
  pollMs?: number;
  /** Offer the mirror's meta.json as the far dir's seed (a child's first link makes its dir from it). */
  seed?: boolean;
  /** The child's conversation file here, to mirror it too (the relay runs with --session). */
  session?: string;
}

interface Session {
  out: FrameWriter;
  receiver: FileReceiver;
  eventsFd: number;
  /** The mirror's conversation, open for appends, when it is carried. */
  sessionFd: number | undefined;
  /** Outbound files as the hello reported them (path → sha). */
  offered: Record<string, string>;
  /** What the far side has of our outbound files (path → sha), once the welcome settled it. */
  pushed: Map<string, string> | undefined;
  /** The outbound files sent right behind the hello (path → sha), for a child that has never run. */
  eager: Map<string, string> | undefined;
  /** Local outbound files as last looked at (size:mtime:ino), to hash only what changed. */
  seen: Map<string, string>;
  /** Frames (and other work) waiting behind one that is being handled asynchronously. */
  queue: Promise<void>;
  /** How many are in that queue: none, and a frame is handled the moment it arrives. */
  backlog: number;
  watchers: fs.FSWatcher[];
  timer: NodeJS.Timeout | undefined;
  reason: string | undefined;
  scanning: boolean;
  rescan: boolean;
}

export class MirrorFeeder extends EventEmitter {
  private s: Session | undefined;
  /** Whether a link was attached before (this process wrote the mirror's copies since it started). */
  private linked = false;
  /** This link's probe files (placeProbe), until the relay answers. */
  private probes: string[] = [];

  constructor(
    readonly dir: string,
    private readonly opts: FeederOptions = {},
  ) {
    super();
  }

  get attached(): boolean {
    return this.s !== undefined;
  }

  /** Starts syncing over `link` (one at a time: attach again after `closed`). */
  attach(link: MirrorLink): void {
    if (this.s) throw new Error("mirror feeder is already attached");
    ensureDir(this.dir);
    const events = path.join(this.dir, EVENTS);
    const eventsFd = openAppend(events);
    const size = wholeLines(eventsFd);
    const inbound: Record<string, { size: number; mtimeMs: number }> = {};
    // A child whose log is empty has never run: whatever far side it has holds none of its outbound files, so
    // they go right behind the hello instead of a round trip later (the relay drops them if it has any).
    const eager = this.opts.seed === true && size === 0;
    // Copies are written without fsync: this process's first link vouches for none of them (a crash of the
    // machine may have left one with its stamp but not its bytes), so each is sent again once. A child that
    // has never run has no copies: its meta.json is the parent's own, written whole, and the seed of the far one.
    const trusted = this.linked || eager;
    this.linked = true;
    for (const rel of listFiles(this.dir, "inbound")) {
      const st = stampOf(path.join(this.dir, rel));
      if (st) inbound[rel] = { size: st.size, mtimeMs: trusted ? st.mtimeMs : 0 };
    }
    const offered: Record<string, string> = {};
    for (const rel of listFiles(this.dir, "outbound")) {
      const sha = shaOfFile(path.join(this.dir, rel));
      if (sha) offered[rel] = sha;
    }
    let sessionFd: number | undefined;
    let session: { size: number; tail: string } | undefined;
    if (this.opts.session) {
      ensureDir(path.dirname(this.opts.session));
      sessionFd = openAppend(this.opts.session);
      const size = wholeLines(sessionFd);
      session = { size, tail: tailSha(this.opts.session, size) };
    }
    const s: Session = {
      out: new FrameWriter(link.writable),
      receiver: new FileReceiver(this.dir, "inbound", undefined, false),
      eventsFd,
      sessionFd,
      offered,
      pushed: undefined,
      eager: undefined,
      seen: new Map(),
      queue: Promise.resolve(),
      backlog: 0,
      watchers: [],
      timer: undefined,
      reason: undefined,
      scanning: false,
      rescan: false,
    };
    this.s = s;
    const decoder = new FrameDecoder();
    link.readable.on("data", (chunk: Buffer) => {
      if (this.s !== s) return;
      let frames: Frame[];
      try {
        frames = decoder.push(chunk);
      } catch (e) {
        this.run(s, () => this.end(s, `protocol error: ${(e as Error).message}`));
        return;
      }
      for (const f of frames) this.run(s, () => this.handle(s, f));
    });
    const ended = (): void => {
      this.run(s, () => this.end(s, s.reason ?? "the relay ended the stream"));
    };
    link.readable.on("end", ended);
    link.readable.on("close", ended);
    link.readable.on("error", ended);
    const probe = this.placeProbe();
    const hello: Header = {
      t: "hello",
      probe,
      v: PROTOCOL_VERSION,
      events: { size, tail: tailSha(events, size) },
      inbound,
      outbound: offered,
      ...(this.opts.seed ? seedOf(this.dir) : {}),
      ...(session ? { session } : {}),
      ...(eager ? { eager } : {}),
    };
    // A hello too large to frame (tens of thousands of files) ends the link with the reason.
    s.out.send(hello).catch((e) => this.end(s, `mirror: ${(e as Error).message}`));
    // Queued before any answer is handled: the welcome finds what went out eagerly.
    if (eager) this.run(s, () => this.pushEager(s));
  }

  /**
   * Does `work` in order with the link's other work: at once when nothing waits (a mirror's frames are then
   * written as they arrive, not after the other mirrors' frames of the same read), else behind what waits.
   * A failure ends the link.
   */
  private run(s: Session, work: () => Promise<void> | void): void {
    const failed = (e: unknown): void => this.end(s, `mirror: ${(e as Error).message.split("\n")[0]}`);
    let pending: Promise<void>;
    if (s.backlog === 0) {
      try {
        const p = work();
        if (!p) return;
        pending = p;
      } catch (e) {
        failed(e);
        return;
      }
    } else pending = s.queue.then(work);
    s.backlog++;
    s.queue = pending.catch(failed).finally(() => {
      s.backlog--;
    });
  }

  /** Sends every outbound file and a sync, marked eager (see the hello's `eager`). */
  private async pushEager(s: Session): Promise<void> {
    const sent = new Map<string, string>();
    for (const rel of Object.keys(s.offered)) {
      const w = readWhole(path.join(this.dir, rel));
      if (!w) continue;
      await sendData(s.out, rel, w.data, undefined, true);
      sent.set(rel, sha256(w.data));
    }
    s.eager = sent;
    await s.out.send({ t: "sync", eager: true });
  }

  /**
   * A file only this link's feeder makes, in the mirror dir and beside its conversation: the relay that
   * finds it on its side is looking at this very disk (relay.ts). Removed once the relay answered.
   */
  private placeProbe(): string {
    const name = `.mirror-probe-${randomBytes(16).toString("hex")}`;
    const files = [path.join(this.dir, name)];
    if (this.opts.session) files.push(path.join(path.dirname(this.opts.session), name));
    for (const f of files) fs.writeFileSync(f, "", { mode: 0o600 });
    this.probes = files;
    return name;
  }

  private dropProbes(): void {
    for (const f of this.probes.splice(0)) fs.rmSync(f, { force: true });
  }

  /** Ends the current link (the relay sees its stdin close and exits). */
  close(reason = "closed by its owner"): void {
    if (this.s) this.end(this.s, reason);
  }

  /** Handles one frame from the relay: at once, or (a file in chunks, a removal, the welcome) by a promise. */
  private handle(s: Session, { header: h, payload }: Frame): Promise<void> | undefined {
    if (this.s !== s) return;
    if (h.t === "welcome") {
      this.dropProbes();
      return this.welcome(s, h.want, h.took === true);
    }
    if (!s.pushed && h.t !== "error") throw new ProtocolError(`${h.t} frame before the welcome`);
    if (h.t === "events") {
      const have = fs.fstatSync(s.eventsFd).size;
      if (h.at !== have) throw new ProtocolError(`events from byte ${h.at}, but the mirror has ${have}`);
      // No fsync: what a crash of this machine loses, the next hello asks for again (wholeLines).
      writeAll(s.eventsFd, payload);
      this.emit("events", have + payload.length);
    } else if (h.t === "session") {
      if (s.sessionFd === undefined) throw new ProtocolError("conversation bytes, but none is carried");
      const have = fs.fstatSync(s.sessionFd).size;
      if (h.at !== have)
        throw new ProtocolError(`conversation from byte ${h.at}, but the mirror has ${have}`);
      writeAll(s.sessionFd, payload);
    } else if (h.t === "put") {
      const now = s.receiver.takeWhole(h, payload);
      if (now) this.emit("inbound", now.rel);
      else
        return s.receiver.chunk(h, payload).then((done) => {
          if (done) this.emit("inbound", done.rel);
        });
    } else if (h.t === "del") return this.applyDel(s, h);
    else if (h.t === "synced") this.emit("caught-up");
    else if (h.t === "error") s.reason = `relay: ${h.message.split("\n")[0]!.slice(0, 500)}`;
    else throw new ProtocolError(`unexpected ${h.t} frame from the relay`);
  }

  private async welcome(s: Session, want: string[], took: boolean): Promise<void> {
    if (s.pushed) throw new ProtocolError("a second welcome");
    if (took && !s.eager) throw new ProtocolError("took files that were not sent eagerly");
    const pushed = took ? new Map(s.eager) : new Map(Object.entries(s.offered));
    if (!took)
      for (const rel of want) {
        if (s.offered[checkRel(rel, "outbound")] === undefined)
          throw new ProtocolError(`wants ${rel}, not offered`);
        pushed.delete(rel);
      }
    s.pushed = pushed;
    this.emit("connected");
    await this.scanOut(s);
    // caught-up waits for the far side to have applied what we pushed (a host may start on it): the eager
    // sync already went behind the eager files; otherwise a sync goes now.
    if (!took) await s.out.send({ t: "sync" });
    this.watch(s);
  }

  private async applyDel(s: Session, h: Extract<Header, { t: "del" }>): Promise<void> {
    if (h.sha) {
      // The far side took (or dropped) our file: remove it here too, unless it was rewritten meanwhile.
      const rel = checkRel(h.path, "outbound");
      const file = path.join(this.dir, rel);
      if (shaOfFile(file) === h.sha) await fs.promises.rm(file, { force: true });
      if (s.pushed?.get(rel) === h.sha) s.pushed.delete(rel);
      s.seen.delete(rel);
    } else {
      await fs.promises.rm(path.join(this.dir, checkRel(h.path, "inbound")), { force: true });
      this.emit("inbound", h.path);
    }
  }

  /** Pushes outbound files new or changed since the far side last had them, and removals. */
  private async scanOut(s: Session): Promise<void> {
    if (s.scanning) {
      s.rescan = true;
      return;
    }
    s.scanning = true;
    try {
      do {
        s.rescan = false;
        const pushed = s.pushed!;
        const listed = listFiles(this.dir, "outbound");
        for (const rel of listed) {
          const st = stampOf(path.join(this.dir, rel));
          const key = st ? `${st.size}:${st.mtimeRaw}:${st.ino}` : "";
          if (!st || s.seen.get(rel) === key) continue;
          const w = readWhole(path.join(this.dir, rel));
          if (!w) continue;
          s.seen.set(rel, key);
          const sha = sha256(w.data);
          if (pushed.get(rel) === sha) continue;
          await sendData(s.out, rel, w.data);
          pushed.set(rel, sha);
        }
        const have = new Set(listed);
        for (const [rel, sha] of [...pushed])
          if (!have.has(rel)) {
            pushed.delete(rel);
            s.seen.delete(rel);
            await s.out.send({ t: "del", path: rel, sha });
          }
      } while (s.rescan && this.s === s);
    } finally {
      s.scanning = false;
    }
  }

  private watch(s: Session): void {
    const hint = (): void => {
      if (this.s === s) this.run(s, () => this.scanOut(s));
    };
    for (const d of [".", ...OUTBOUND_DIRS]) {
      const dir = path.join(this.dir, d);
      try {
        ensureDir(dir);
        s.watchers.push(
          fs
            .watch(dir, (_event, name) => {
              if (carriedChange(OUTBOUND_HINTS, d, name)) hint();
            })
            .on("error", () => {}),
        );
      } catch {
        // The poll covers a folder that cannot be watched.
      }
    }
    s.timer = setInterval(hint, this.opts.pollMs ?? 1000);
  }

  private end(s: Session, reason: string): void {
    if (this.s !== s) return;
    this.s = undefined;
    this.dropProbes();
    for (const w of s.watchers) w.close();
    if (s.timer) clearInterval(s.timer);
    s.receiver.abort();
    for (const fd of [s.eventsFd, s.sessionFd])
      try {
        if (fd !== undefined) fs.closeSync(fd);
      } catch {}
    s.out.end();
    this.emit("closed", reason);
  }
}

/** The hello's seed: the mirror's meta.json and its stamp, when it has one. */
function seedOf(dir: string): { seed?: { meta: string; mtimeMs: number } } {
  const w = readWhole(path.join(dir, "meta.json"));
  return w ? { seed: { meta: w.data.toString("utf8"), mtimeMs: w.mtimeMs } } : {};
}

/**
 * The mirror's log up to its last whole line, cutting a torn tail off first: the log is written without
 * fsync, so a crash of this machine may leave it short or torn; its size is then the cursor to resume from.
 */
function wholeLines(fd: number): number {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return 0;
  const n = Math.min(size, 2 * 1024 * 1024);
  const buf = Buffer.allocUnsafe(n);
  const got = fs.readSync(fd, buf, 0, n, size - n);
  const lf = buf.subarray(0, got).lastIndexOf(0x0a);
  const keep = lf < 0 ? size - n : size - n + lf + 1;
  if (keep !== size) fs.ftruncateSync(fd, keep);
  return keep;
}
