/**
 * The far side of the mirror: runs next to a child's artifact dir and keeps one feeder's mirror of it
 * current. On a hello it checks the mirror's event log is a prefix of its own, settles the outbound files
 * (ledger.ts), then in every pass — on an fs.watch hint or the safety poll — sends changed inbound files,
 * files gone, and the event log's new complete lines. A pass measures the log's end before it looks at the
 * files, so a snapshot the host wrote before a completion always reaches the mirror before that completion.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { FAR_MARK } from "../../artifacts/admission.js";
import { childFiles } from "../../artifacts/layout.js";
import { ensureDir, writeFileAtomic } from "../../util/fsx.js";
import { pokeHost } from "../../util/poke.js";
import { APPENDS, applyParentAppend, pendingAppends } from "./far-appends.js";
import { DeliveryLedger } from "./ledger.js";
import { LogSender } from "./log-stream.js";
import {
  carriedChange,
  checkRel,
  EVENTS,
  EVENTS_SEED,
  INBOUND_DIRS,
  INBOUND_TOP,
  listFiles,
  OUTBOUND_DIRS,
  OUTBOUND_TOP,
  SESSION_SEED,
  sameStamp,
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
import { FileReceiver, sendFile } from "./transfer.js";

/** A byte duplex as two streams (a child process's stdout and stdin, a socket twice). */
/** What a change in the artifact dir itself may be to a relay: the log, a carried file, a folder of them. */
const ROOT_HINTS = new Set([EVENTS, ...INBOUND_TOP, ...OUTBOUND_TOP, ...INBOUND_DIRS, ...OUTBOUND_DIRS]);

export interface MirrorLink {
  readable: NodeJS.ReadableStream;
  writable: NodeJS.WritableStream;
}

export interface RelayOptions {
  /** The safety poll (ms); hints come from fs.watch. */
  pollMs?: number;
  /** The child's conversation file, to carry it too (sessions/store.ts sessionFileOf). */
  sessionFile?: string;
  log?: (line: string) => void;
}

type Stamp = NonNullable<ReturnType<typeof stampOf>>;
const sameVersion = (a: Stamp | undefined, b: Stamp | undefined): boolean =>
  !!a && !!b && a.size === b.size && a.mtimeRaw === b.mtimeRaw && a.ino === b.ino;

export class MirrorRelay {
  private readonly out: FrameWriter;
  private readonly ledger: DeliveryLedger;
  private readonly receiver: FileReceiver;
  private readonly log: (line: string) => void;
  private readonly events: LogSender;
  /** The child's conversation, when this relay carries it (outside the artifact dir, next to it). */
  private readonly session:
    | { log: LogSender; ready: boolean; mirror: { size: number; tail: string } }
    | undefined;
  /** Inbound files as last sent (or as the mirror already had them). */
  private readonly sent = new Map<string, Stamp>();
  /** The mirror's log, while this far side (made anew, its log empty) waits for the log's seed. */
  private eventsAwaited: { size: number; tail: string } | undefined;
  /** Outbound files delivered and still there: path → sha. */
  private present = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private greeted = false;
  /** What the files and sync the feeder sent behind its hello (`eager`) are for: applied, or dropped. */
  private eager: "take" | "drop" | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  /** A pass is due once this event-loop turn's hints are all in. */
  private hinted = false;
  private stopped = false;
  private readonly watchers: fs.FSWatcher[] = [];
  private timer: NodeJS.Timeout | undefined;
  private finish!: (err?: Error) => void;

  constructor(
    private readonly root: string,
    private readonly link: MirrorLink,
    private readonly opts: RelayOptions = {},
  ) {
    this.out = new FrameWriter(link.writable);
    this.events = new LogSender(path.join(root, EVENTS), "events", EVENTS);
    this.session = opts.sessionFile
      ? {
          log: new LogSender(opts.sessionFile, "session", "conversation"),
          ready: false,
          mirror: { size: 0, tail: "" },
        }
      : undefined;
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    this.ledger = new DeliveryLedger(root);
    this.receiver = new FileReceiver(root, "outbound", (rel, sha) => this.ledger.record(rel, sha));
  }

  /** Serves the link until it ends; rejects (after telling the peer) when the peer breaks the protocol. */
  run(): Promise<void> {
    this.ledger.recover();
    const done = new Promise<void>((resolve, reject) => {
      this.finish = (err) => (err ? reject(err) : resolve());
    });
    const decoder = new FrameDecoder();
    this.link.readable.on("data", (chunk: Buffer) => {
      if (this.stopped) return;
      try {
        for (const f of decoder.push(chunk)) this.queue = this.queue.then(() => this.handle(f));
      } catch (e) {
        this.queue = this.queue.then(() => this.fail(e));
      }
      this.queue = this.queue.catch((e) => this.fail(e));
    });
    this.link.readable.on("end", () => this.stop());
    this.link.readable.on("close", () => this.stop());
    this.link.readable.on("error", () => this.stop());
    return done;
  }

  private async handle({ header: h, payload }: Frame): Promise<void> {
    if (this.stopped) return;
    if (!this.greeted && h.t !== "hello") throw new ProtocolError(`${h.t} frame before hello`);
    if (h.t === "hello") return this.greet(h);
    // Eager files the welcome did not take are dropped, and their sync with them: the feeder sends what the
    // welcome asked for, then a sync of its own.
    if ((h.t === "put" || h.t === "sync") && h.eager && this.eager !== "take") return;
    if (h.t === "put") {
      const done = await this.receiver.chunk(h, payload);
      if (!done) return;
      this.present.set(done.rel, done.sha);
      if (done.rel.startsWith(`${APPENDS}/`)) await this.applyAppend(done.rel);
      else if (done.rel === SESSION_SEED) this.plantSession();
      else if (done.rel === EVENTS_SEED) this.plantEvents();
      // The host sleeps until poked (util/poke.ts): the parent's poke came before the file was here.
      else if (done.rel !== "env.json") pokeHost(this.root);
    } else if (h.t === "del") {
      const rel = checkRel(h.path, "outbound");
      const file = path.join(this.root, rel);
      // Only the version the mirror had: a file the host side wrote under that name since stays.
      if (h.sha && this.ledger.delivered.get(rel) === h.sha && shaOfFile(file) === h.sha) fs.rmSync(file);
      this.present.delete(rel);
    } else if (h.t === "sync") {
      // Every put before it is in place: what the host will read at start is there once this is answered.
      await this.pass();
      await this.out.send({ t: "synced" });
    } else throw new ProtocolError(`unexpected ${h.t} frame from the mirror`);
  }

  private async greet(h: Extract<Header, { t: "hello" }>): Promise<void> {
    if (this.greeted) throw new ProtocolError("a second hello");
    if (h.v !== PROTOCOL_VERSION)
      throw new ProtocolError(`mirror protocol v${h.v}; this relay speaks v${PROTOCOL_VERSION}`);
    this.greeted = true;
    // The mirror's own disk: feeding it from itself would append every byte to the file it came from.
    if (h.probe) {
      const here = [path.join(this.root, h.probe)];
      if (this.session) here.push(path.join(path.dirname(this.session.log.file), h.probe));
      if (here.some((f) => fs.existsSync(f)))
        throw new ProtocolError(
          "the far dir is the mirror itself: this place shares the parent's disk, so it needs no mirror",
        );
    }
    if (h.seed) this.plant(h.seed);
    else if (!fs.lstatSync(this.root, { throwIfNoEntry: false })?.isDirectory())
      throw new ProtocolError(`${this.root} is not a child's artifact dir here`);
    const eventsWanted = this.resumeEvents(h);
    const sessionWanted = this.resumeSession(h);
    const unwantedSeed = (rel: string): boolean =>
      (rel === SESSION_SEED && !sessionWanted) || (rel === EVENTS_SEED && !eventsWanted);

    // Outbound: in step, gone since delivered (tell the mirror), removed by the mirror meanwhile, or wanted.
    const here = this.ledger.presentDelivered();
    const want: string[] = [];
    const gone: Header[] = [];
    for (const [p, sha] of Object.entries(h.outbound)) {
      const rel = checkRel(p, "outbound");
      // A conversation or log already here needs no seed: the mirror drops its copy.
      if (unwantedSeed(rel)) gone.push({ t: "del", path: rel, sha });
      else if (shaOfFile(path.join(this.root, rel)) === sha) here.set(rel, sha);
      else if (this.ledger.delivered.get(rel) === sha) gone.push({ t: "del", path: rel, sha });
      else want.push(rel);
    }
    for (const [rel, sha] of here)
      if (h.outbound[rel] === undefined) {
        fs.rmSync(path.join(this.root, rel), { force: true });
        here.delete(rel);
      } else if (h.outbound[rel] !== sha) here.delete(rel);
    this.present = here;
    // The eager files are exactly what the welcome would ask for when it asks for every file offered.
    const took = h.eager === true && gone.length === 0 && want.length === Object.keys(h.outbound).length;
    if (h.eager) this.eager = took ? "take" : "drop";
    for (const [p, stamp] of Object.entries(h.inbound)) {
      const rel = checkRel(p, "inbound");
      const now = stampOf(path.join(this.root, rel));
      if (now && sameStamp(now, stamp)) this.sent.set(rel, now);
      // A far side made anew lacks the earlier turns' files: the mirror keeps its copies.
      else if (!now && !eventsWanted) gone.push({ t: "del", path: rel });
    }
    await this.out.send({ t: "welcome", v: PROTOCOL_VERSION, want, ...(h.eager ? { took } : {}) });
    for (const g of gone) await this.out.send(g);
    await this.pass();
    // Requests a relay ended before answering are answered now, in the order they were made.
    for (const rel of pendingAppends(this.root)) await this.applyAppend(rel);
    this.watch();
  }

  /** A child's first link: makes its artifact dir here from its meta.json (a dir already here is kept). */
  private plant(seed: { meta: string; mtimeMs: number }): void {
    const meta = path.join(this.root, "meta.json");
    if (fs.lstatSync(meta, { throwIfNoEntry: false })) return;
    const f = childFiles(this.root);
    for (const d of [f.dir, f.inbox, f.outputs, f.prompts, f.control, f.runner, f.answers]) ensureDir(d);
    const events = path.join(this.root, EVENTS);
    if (!fs.lstatSync(events, { throwIfNoEntry: false })) fs.writeFileSync(events, "", { mode: 0o600 });
    writeFileAtomic(meta, seed.meta);
    // Its host asks the parent's machine for admission instead of deciding here (artifacts/admission.ts).
    fs.writeFileSync(path.join(this.root, FAR_MARK), "", { mode: 0o600 });
    // Stamped as the mirror's copy is, so the first pass does not send it back.
    const t = new Date(seed.mtimeMs);
    fs.utimesSync(meta, t, t);
  }

  /** Writes a parent's records (or refuses them on a moved log), sends the log on, then drops the request. */
  private async applyAppend(rel: string): Promise<void> {
    await applyParentAppend(this.root, rel).catch((e: Error) => {
      this.log(`mirror relay: a parent's records were not written: ${e.message}`);
    });
    await this.pass();
    fs.rmSync(path.join(this.root, rel), { force: true });
    await this.pass();
  }

  /** One pass at a time; a hint during one runs another after it. */
  private pass(): Promise<void> {
    if (this.passing) {
      this.again = true;
      return this.passing;
    }
    this.passing = (async () => {
      do {
        this.again = false;
        await this.passOnce();
      } while (this.again && !this.stopped);
    })().finally(() => {
      this.passing = undefined;
    });
    return this.passing;
  }

  private async passOnce(): Promise<void> {
    // What the host took (an inbox item, env.json) is looked for before the log's end is measured, and told
    // after the log: the host records a turn before it drops its inbox item, so the mirror never shows the
    // item gone and its turn not yet begun.
    const taken = [...this.present].filter(([rel]) => !fs.existsSync(path.join(this.root, rel)));
    // Both ends before the files, the log's first: what a completion names (its snapshot, the turn's
    // lines of the conversation, written before it) always lands before it.
    const end = this.events.end();
    const sessionEnd = this.session?.ready ? this.session.log.end() : undefined;
    const listed = new Set(listFiles(this.root, "inbound"));
    for (const rel of listed) {
      // Files under outputs/, prompts/, isolation/ never change once there.
      if (rel.includes("/") && this.sent.has(rel)) continue;
      const now = stampOf(path.join(this.root, rel));
      if (!now || sameVersion(now, this.sent.get(rel))) continue;
      try {
        const s = await sendFile(this.out, this.root, rel, true);
        if (s) this.sent.set(rel, now);
      } catch (e) {
        this.log(`mirror relay: not sending ${rel}: ${(e as Error).message}`);
        this.sent.set(rel, now);
      }
    }
    for (const rel of [...this.sent.keys()])
      if (!listed.has(rel)) {
        this.sent.delete(rel);
        await this.out.send({ t: "del", path: rel });
      }
    const stopped = (): boolean => this.stopped;
    if (sessionEnd !== undefined) await this.session!.log.send(this.out, sessionEnd, stopped);
    if (!this.eventsAwaited) await this.events.send(this.out, end, stopped);
    for (const [rel, sha] of taken) {
      if (this.present.get(rel) !== sha) continue;
      this.present.delete(rel);
      await this.out.send({ t: "del", path: rel, sha });
    }
  }

  /**
   * The event log's cursor: after the mirror's copy, which must be a prefix of the log here. A far side made
   * anew (its log empty, the mirror's not) waits for the mirror's copy, offered as a seed, and carries on from
   * its end. True when the seed is wanted.
   */
  private resumeEvents(h: Extract<Header, { t: "hello" }>): boolean {
    if (h.events.size > 0 && this.events.end() === 0 && h.outbound[EVENTS_SEED] !== undefined) {
      this.eventsAwaited = h.events;
      return true;
    }
    this.events.resume(h.events);
    return false;
  }

  /** The log's seed delivered: it becomes the log here (while that is still empty), then goes. */
  private plantEvents(): void {
    const seed = path.join(this.root, EVENTS_SEED);
    const mirror = this.eventsAwaited;
    if (mirror && this.events.end() === 0) {
      fs.copyFileSync(seed, path.join(this.root, `.${EVENTS}.mirror.tmp`));
      fs.renameSync(path.join(this.root, `.${EVENTS}.mirror.tmp`), this.events.file);
    }
    fs.rmSync(seed, { force: true });
    if (mirror) {
      this.eventsAwaited = undefined;
      this.events.resume(mirror);
    }
  }

  /**
   * The conversation's cursor (a relay asked to carry it): resumed after the mirror's copy when it is here;
   * when it is not yet (a child's first link), it waits for the seed. True when the seed is wanted.
   */
  private resumeSession(h: Extract<Header, { t: "hello" }>): boolean {
    if (!this.session) return false;
    const mirror = h.session ?? { size: 0, tail: tailSha("", 0) };
    this.session.mirror = mirror;
    if (fs.existsSync(this.session.log.file)) {
      this.session.log.resume(mirror);
      this.session.ready = true;
      return false;
    }
    if (h.outbound[SESSION_SEED] !== undefined) return true;
    if (mirror.size > 0)
      throw new ProtocolError("the mirror has a conversation, the far side none, and no seed came");
    this.session.ready = true;
    return false;
  }

  /** The seed delivered: it becomes the far conversation (unless one appeared meanwhile), then goes. */
  private plantSession(): void {
    if (!this.session) return;
    const seed = path.join(this.root, SESSION_SEED);
    const file = this.session.log.file;
    if (!fs.existsSync(file)) {
      ensureDir(path.dirname(file));
      fs.copyFileSync(seed, `${file}.mirror.tmp`);
      fs.renameSync(`${file}.mirror.tmp`, file);
    }
    fs.rmSync(seed, { force: true });
    if (!this.session.ready) {
      this.session.log.resume(this.session.mirror);
      this.session.ready = true;
    }
  }

  private watch(): void {
    // One pass for all the hints of one wake-up: a host ending its turn writes its snapshot, its output
    // (temp file, rename) and its records at once, and each would otherwise be a pass of its own over the dir.
    const hint = (): void => {
      if (this.stopped || this.hinted) return;
      this.hinted = true;
      setImmediate(() => {
        this.hinted = false;
        if (!this.stopped) this.pass().catch((e) => this.fail(e));
      });
    };
    for (const d of [".", ...INBOUND_DIRS, ...OUTBOUND_DIRS]) {
      try {
        const w = fs.watch(path.join(this.root, d), (_event, name) => {
          if (carriedChange(ROOT_HINTS, d, name)) hint();
        });
        w.on("error", () => w.close());
        this.watchers.push(w);
      } catch {
        // No folder yet, or no inotify left: the poll covers it.
      }
    }
    this.timer = setInterval(hint, this.opts.pollMs ?? 1000);
  }

  private async fail(e: unknown): Promise<void> {
    if (this.stopped) return;
    const message = (e as Error).message.split("\n")[0]!;
    this.log(`mirror relay: ${message}`);
    await this.out.send({ t: "error", message }).catch(() => {});
    this.stop(e instanceof Error ? e : new Error(message));
  }

  private stop(err?: Error): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const w of this.watchers) w.close();
    if (this.timer) clearInterval(this.timer);
    this.receiver.abort();
    this.out.end();
    this.finish(err);
  }
}
