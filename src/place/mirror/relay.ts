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
import { ensureDir, writeFileAtomic } from "../../util/fsx.js";
import { pokeHost } from "../../util/poke.js";
import { openRegular } from "../../util/safe-read.js";
import { APPENDS, applyParentAppend, pendingAppends } from "./far-appends.js";
import { DeliveryLedger } from "./ledger.js";
import {
  checkRel,
  EVENTS,
  INBOUND_DIRS,
  listFiles,
  OUTBOUND_DIRS,
  sameStamp,
  shaOfFile,
  stampOf,
  tailSha,
} from "./paths.js";
import {
  CHUNK,
  type Frame,
  FrameDecoder,
  FrameWriter,
  type Header,
  PROTOCOL_VERSION,
  ProtocolError,
} from "./protocol.js";
import { FileReceiver, sendFile } from "./transfer.js";

/** A byte duplex as two streams (a child process's stdout and stdin, a socket twice). */
export interface MirrorLink {
  readable: NodeJS.ReadableStream;
  writable: NodeJS.WritableStream;
}

export interface RelayOptions {
  /** The safety poll (ms); hints come from fs.watch. */
  pollMs?: number;
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
  /** Offset just past the last event byte sent. */
  private cursor = 0;
  /** Inbound files as last sent (or as the mirror already had them). */
  private readonly sent = new Map<string, Stamp>();
  /** Outbound files delivered and still there: path → sha. */
  private present = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private greeted = false;
  private passing: Promise<void> | undefined;
  private again = false;
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
    this.link.readable.on("error", () => this.stop());
    return done;
  }

  private async handle({ header: h, payload }: Frame): Promise<void> {
    if (this.stopped) return;
    if (!this.greeted && h.t !== "hello") throw new ProtocolError(`${h.t} frame before hello`);
    if (h.t === "hello") return this.greet(h);
    if (h.t === "put") {
      const done = this.receiver.chunk(h, payload);
      if (!done) return;
      this.present.set(done.rel, done.sha);
      if (done.rel.startsWith(`${APPENDS}/`)) await this.applyAppend(done.rel);
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
    if (h.v !== PROTOCOL_VERSION) throw new ProtocolError(`mirror protocol v${h.v}; this relay speaks v1`);
    this.greeted = true;
    if (h.seed) this.plant(h.seed);
    else if (!fs.lstatSync(this.root, { throwIfNoEntry: false })?.isDirectory())
      throw new ProtocolError(`${this.root} is not a child's artifact dir here`);
    const events = path.join(this.root, EVENTS);
    const far = fs.lstatSync(events, { throwIfNoEntry: false })?.size ?? 0;
    if (h.events.size > far)
      throw new ProtocolError(
        `the mirror's ${EVENTS} (${h.events.size} bytes) is longer than the far side's (${far})`,
      );
    if (tailSha(events, h.events.size) !== h.events.tail)
      throw new ProtocolError(
        `the mirror's ${EVENTS} differs from the far side's before byte ${h.events.size}`,
      );
    this.cursor = h.events.size;

    // Outbound: in step, gone since delivered (tell the mirror), removed by the mirror meanwhile, or wanted.
    const here = this.ledger.presentDelivered();
    const want: string[] = [];
    const gone: Header[] = [];
    for (const [p, sha] of Object.entries(h.outbound)) {
      const rel = checkRel(p, "outbound");
      if (shaOfFile(path.join(this.root, rel)) === sha) here.set(rel, sha);
      else if (this.ledger.delivered.get(rel) === sha) gone.push({ t: "del", path: rel, sha });
      else want.push(rel);
    }
    for (const [rel, sha] of here)
      if (h.outbound[rel] === undefined) {
        fs.rmSync(path.join(this.root, rel), { force: true });
        here.delete(rel);
      } else if (h.outbound[rel] !== sha) here.delete(rel);
    this.present = here;
    for (const [p, stamp] of Object.entries(h.inbound)) {
      const rel = checkRel(p, "inbound");
      const now = stampOf(path.join(this.root, rel));
      if (now && sameStamp(now, stamp)) this.sent.set(rel, now);
      else if (!now) gone.push({ t: "del", path: rel });
    }
    await this.out.send({ t: "welcome", v: PROTOCOL_VERSION, want });
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
    ensureDir(this.root);
    for (const d of ["inbox", "outputs", "prompts", "control", "runner", "answers"])
      ensureDir(path.join(this.root, d));
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
    const end = fs.lstatSync(path.join(this.root, EVENTS), { throwIfNoEntry: false })?.size ?? 0;
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
    for (const [rel, sha] of [...this.present])
      if (!fs.existsSync(path.join(this.root, rel))) {
        this.present.delete(rel);
        await this.out.send({ t: "del", path: rel, sha });
      }
    await this.sendEvents(end);
  }

  /** Event bytes from the cursor up to the last LF before `end` (a torn line waits for its LF). */
  private async sendEvents(end: number): Promise<void> {
    if (end < this.cursor)
      throw new ProtocolError(
        `${EVENTS} on the far side shrank to ${end} bytes, below the mirror's ${this.cursor}`,
      );
    if (end === this.cursor) return;
    const { fd } = openRegular(path.join(this.root, EVENTS));
    try {
      while (this.cursor < end && !this.stopped) {
        const want = Math.min(CHUNK, end - this.cursor);
        const buf = Buffer.allocUnsafe(want);
        const got = fs.readSync(fd, buf, 0, want, this.cursor);
        const lf = buf.subarray(0, got).lastIndexOf(0x0a);
        // A run of a whole chunk with no LF is no record (they are ≤ 1 MiB with their LF): it goes as it is.
        const take = lf >= 0 ? lf + 1 : got === CHUNK ? got : 0;
        if (take === 0) break;
        await this.out.send({ t: "events", at: this.cursor }, buf.subarray(0, take));
        this.cursor += take;
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  private watch(): void {
    const hint = (): void => {
      if (!this.stopped) this.pass().catch((e) => this.fail(e));
    };
    for (const d of [".", ...INBOUND_DIRS, ...OUTBOUND_DIRS]) {
      try {
        const w = fs.watch(path.join(this.root, d), hint);
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
