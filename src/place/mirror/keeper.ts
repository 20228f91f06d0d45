/**
 * One mirrored child, kept current by its place's keeper (place-keeper.ts) for as long as its host runs: a
 * feeder over the child's channel of the place's link (the feeder resumes from the mirror's byte cursor
 * over each new channel, so a broken link loses nothing and repeats nothing), the desk that serves the far
 * host's run-slot requests (admission-desk.ts), the person's notifications of what the far host records (its
 * host tells nobody from there), and the watch for the host's end. It ends when the child's
 * log records the host's end (after a short linger for the files written last), when the mirror dir is
 * removed, or when its keeper stops it.
 *
 * Events: `synced` (once: the first channel caught up, so the far dir holds all the host reads at start),
 * `detached` (the channel closed while the child is kept: the reason; attach a new one), `ended` (why).
 */
import { EventEmitter } from "node:events";
import * as fs from "node:fs";
import * as path from "node:path";
import { ADMISSION_FILE } from "../../artifacts/admission.js";
import type { ChildMeta, CompletionEvent, MusterEvent } from "../../artifacts/events.js";
import { childFiles, pathsOfArtifactDir } from "../../artifacts/layout.js";
import { NdjsonReader } from "../../artifacts/reader.js";
import { isTerminal, pauseTree } from "../../artifacts/tree-pause.js";
import { Notifier } from "../../notify/notifier.js";
import type { NotifyTarget } from "../../notify/targets.js";
import { sessionFileOf } from "../../sessions/store.js";
import { readJson, writeJsonAtomic } from "../../util/fsx.js";
import { AdmissionDesk } from "./admission-desk.js";
import { MirrorFeeder } from "./feeder.js";
import { EVENTS } from "./paths.js";
import type { MirrorLink } from "./relay.js";

export interface ChildMirrorOptions {
  /** The run-slot bound the far host's turns share with this machine's. */
  maxRunning: number;
  /** What the keeper's command line names, for the run-slot tickets it holds (child/slots.ts). */
  holder: string;
  /** How long the mirror stays after the host's end is recorded (ms). */
  lingerMs?: number;
  /** The person's notification targets (muster notify), told of what the far host records. */
  notify?: NotifyTarget[];
}

const DIR_CHECK_MS = 2000;
const LOG = ".mirror.log";
const LOG_KEEP_BYTES = 1024 * 1024;

export class ChildMirror extends EventEmitter {
  private readonly feeder: MirrorFeeder;
  private readonly desk: AdmissionDesk;
  private readonly reader: NdjsonReader<{ type?: unknown }>;
  private readonly notifier: Notifier;
  private readonly logFile: string;
  private synced = false;
  /** The new records are looked at once this event-loop turn's frames are all written. */
  private checking = false;
  private stopping: string | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    readonly dir: string,
    opts: ChildMirrorOptions,
  ) {
    super();
    this.logFile = path.join(dir, LOG);
    if ((fs.statSync(this.logFile, { throwIfNoEntry: false })?.size ?? 0) > LOG_KEEP_BYTES)
      fs.rmSync(this.logFile);
    // The conversation next to the dir is carried too (the relay's channel says session: true).
    this.feeder = new MirrorFeeder(dir, { seed: true, session: sessionFileOf(dir) });
    this.desk = new AdmissionDesk(dir, opts.maxRunning, opts.holder, (l) => this.log(l));
    // The host's end counts only when recorded after we started (a resumed child's log holds the last one).
    const start = fs.statSync(path.join(dir, EVENTS), { throwIfNoEntry: false })?.size ?? 0;
    this.reader = new NdjsonReader(path.join(dir, EVENTS), undefined, start);
    this.notifier = new Notifier(opts.notify ?? [], whoOf(dir), (l) => this.log(l));
    this.feeder.on("caught-up", () => {
      // The link is up again: readers stop calling the child unreachable.
      fs.rmSync(childFiles(dir).mirrorLink, { force: true });
      if (this.synced) return;
      this.synced = true;
      this.emit("synced");
    });
    // After the turn's writes: the other mirrors' records that came in the same read go first.
    this.feeder.on("events", () => {
      if (this.checking) return;
      this.checking = true;
      setImmediate(() => {
        this.checking = false;
        this.checkEnd(opts.lingerMs ?? 1500);
      });
    });
    this.feeder.on("inbound", (rel: string) => {
      if (rel === ADMISSION_FILE) this.desk.changed();
    });
    this.feeder.on("closed", (reason: string) => {
      if (this.stopping) this.emit("ended", this.stopping);
      else {
        this.markDown(reason);
        this.emit("detached", reason);
      }
    });
    this.timers.push(
      setInterval(() => {
        if (!fs.existsSync(dir)) this.stop("its mirror dir is gone");
      }, DIR_CHECK_MS),
    );
  }

  get stopped(): boolean {
    return this.stopping !== undefined;
  }

  /** Feeds the mirror over `link` (the child's channel); false when the dir is gone (the mirror stops). */
  attach(link: MirrorLink): boolean {
    if (this.stopping) return false;
    if (!fs.existsSync(this.dir)) {
      this.stop("its mirror dir is gone");
      return false;
    }
    this.feeder.attach(link);
    return true;
  }

  stop(why: string): void {
    if (this.stopping) return;
    this.stopping = why;
    this.desk.release();
    fs.rmSync(childFiles(this.dir).mirrorLink, { force: true });
    for (const t of this.timers) clearTimeout(t);
    if (this.feeder.attached) this.feeder.close(why);
    else this.emit("ended", why);
  }

  /**
   * Marks the mirror's link down (`.mirror-link.json`), keeping the first time it went down while it stays
   * down: readers show the child unreachable, and a waiter gives up on it after its bound.
   */
  private markDown(why: string): void {
    const file = childFiles(this.dir).mirrorLink;
    try {
      if (!fs.existsSync(file)) writeJsonAtomic(file, { since: new Date().toISOString(), why });
    } catch {
      // A dir removed meanwhile: the check above stops the mirror.
    }
  }

  /** One line in the mirror's log (`.mirror.log`, beside the mirror: what `carry` quotes on a failure). */
  log(line: string): void {
    try {
      fs.appendFileSync(this.logFile, `${new Date().toISOString()} ${line}\n`, { mode: 0o600 });
    } catch {
      // A dir removed meanwhile: the check above stops the mirror.
    }
  }

  /**
   * A far child's turn that failed on a quota or a refused credential pauses the parent's tree, as a local
   * host's does (its host cannot reach the parent's state root). Written once the completion is mirrored.
   */
  private pauseFor(c: CompletionEvent): void {
    // A record from the far side is data: only a well-formed error pauses anything.
    if (c.status !== "errored" || !isTerminal(c.providerError) || typeof c.turnId !== "string") return;
    if (typeof c.providerError.message !== "string") return;
    try {
      pauseTree(pathsOfArtifactDir(this.dir).primary.dir, c.providerError, {
        child: path.basename(this.dir),
        turnId: c.turnId,
      });
    } catch (e) {
      this.log(`could not pause the tree: ${(e as Error).message}`);
    }
  }

  /**
   * Tells the person of a record the far host wrote. A parent's records (a child it found lost) are told by
   * the parent that wrote them (core/lost-notice.ts), not again here.
   */
  private notify(r: { type?: unknown; by?: unknown; eventId?: unknown }): void {
    if (r.by === "parent" || typeof r.eventId !== "string") return;
    try {
      this.notifier.consider(r as MusterEvent);
    } catch (e) {
      // A record from the far side is data: one that does not read as an event is no notice.
      this.log(`no notice of a ${String(r.type)} record: ${(e as Error).message}`);
    }
  }

  private checkEnd(lingerMs: number): void {
    let ended: boolean | undefined;
    for (const r of this.reader.readNew()) {
      this.notify(r);
      if (r.type === "child_started") ended = false;
      else if (r.type === "child_exited") ended = true;
      else if (r.type === "completion") this.pauseFor(r as CompletionEvent);
    }
    if (ended) this.timers.push(setTimeout(() => this.stop("the child host's end is recorded"), lingerMs));
  }
}

/** Whose events a mirror carries, for its notices: the child and its agent (from the mirror's meta.json). */
function whoOf(dir: string): { child: string; agent: string } {
  let agent = "unknown";
  try {
    const meta = readJson<Partial<ChildMeta>>(childFiles(dir).meta);
    if (typeof meta.agent === "string") agent = meta.agent;
  } catch {
    // A meta.json that is not there yet or not readable: the notice names the child only.
  }
  return { child: path.basename(dir), agent };
}
