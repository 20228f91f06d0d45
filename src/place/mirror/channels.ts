/**
 * Many mirrors over one link: each child's mirror stream (protocol.ts) is a channel of its own over the
 * place's single byte duplex (one `ssh`, one `nsenter`, one `docker exec`), so a place costs one link and one
 * relay process however many children run there. A frame is `[channel u32 BE][kind u8][length u32 BE]
 * [payload]`: `open` (the near side names a channel and says what it carries: a JSON object), `data` (bytes
 * of that channel's stream), `end` (that side of the channel is done). Lengths are checked before anything
 * is buffered. When the link ends, every channel ends with it; each mirror resumes from its own cursor over
 * the next link.
 */
import { EventEmitter } from "node:events";
import { Duplex, type Writable } from "node:stream";

const OPEN = 1;
const DATA = 2;
const END = 3;
const HEAD = 9;
/** A channel's bytes travel in pieces of at most this much, so one big file does not hold the others up. */
const PIECE = 64 * 1024;
/** An open names a folder and a few flags. */
const MAX_OPEN = 64 * 1024;

export class ChannelError extends Error {}

interface Channel {
  stream: Duplex;
  /** Our side ended it (sent `end`). */
  sent: boolean;
  /** The other side ended it. */
  got: boolean;
}

/**
 * One side of a link. The near side `open`s channels; the far side hears `channel` (info, stream). Emits
 * `closed` (reason) once, when the link ended or broke; every channel's stream has ended by then.
 */
export class ChannelMux extends EventEmitter {
  private readonly channels = new Map<number, Channel>();
  private next = 1;
  private buf: Buffer = Buffer.alloc(0);
  private closedWhy: string | undefined;
  /** Frames are being gathered for one write (batch). */
  private corked = false;

  constructor(
    readable: NodeJS.ReadableStream,
    private readonly writable: Writable,
  ) {
    super();
    readable.on("data", (chunk: Buffer) => {
      try {
        this.take(chunk);
      } catch (e) {
        this.close(`link: ${(e as Error).message}`);
      }
    });
    readable.on("end", () => this.close("the link ended"));
    readable.on("close", () => this.close("the link ended"));
    readable.on("error", (e: Error) => this.close(`link: ${e.message}`));
    writable.on("error", (e: Error) => this.close(`link: ${e.message}`));
  }

  get closed(): boolean {
    return this.closedWhy !== undefined;
  }

  get open(): number {
    return this.channels.size;
  }

  /** Opens a channel carrying `info` to the far side; the stream is that channel's bytes both ways. */
  openChannel(info: Record<string, unknown>): Duplex {
    const id = this.next++;
    const stream = this.channel(id);
    if (!this.closed) this.write(id, OPEN, Buffer.from(JSON.stringify(info), "utf8"));
    return stream;
  }

  /** Ends the link's use: every channel ends (their owners see the streams end). */
  close(reason = "closed"): void {
    if (this.closedWhy !== undefined) return;
    this.closedWhy = reason;
    for (const [id, c] of this.channels) {
      this.channels.delete(id);
      c.stream.push(null);
      c.stream.destroy();
    }
    this.emit("closed", reason);
  }

  private channel(id: number): Duplex {
    const c: Channel = { stream: undefined as unknown as Duplex, sent: false, got: false };
    c.stream = new Duplex({
      read: () => {},
      write: (chunk: Buffer, _enc, cb) => {
        if (this.closed || c.sent) return cb();
        let ok = true;
        for (let at = 0; at < chunk.length; at += PIECE)
          ok = this.write(id, DATA, chunk.subarray(at, at + PIECE)) && ok;
        if (ok) cb();
        else this.afterDrain(cb);
      },
      final: (cb) => {
        this.endChannel(id, c);
        cb();
      },
      destroy: (err, cb) => {
        this.endChannel(id, c);
        cb(err);
      },
    });
    this.channels.set(id, c);
    return c.stream;
  }

  private endChannel(id: number, c: Channel): void {
    if (c.sent) return;
    c.sent = true;
    if (!this.closed) this.write(id, END, Buffer.alloc(0));
    if (c.got) this.channels.delete(id);
  }

  private write(id: number, kind: number, payload: Buffer): boolean {
    const head = Buffer.allocUnsafe(HEAD);
    head.writeUInt32BE(id, 0);
    head.writeUInt8(kind, 4);
    head.writeUInt32BE(payload.length, 5);
    this.batch();
    return this.writable.write(payload.length > 0 ? Buffer.concat([head, payload]) : head);
  }

  /**
   * The frames written in one turn of JavaScript — a callback and the promise chains it settles, such as a
   * relay's whole pass or a channel's open and its hello — go to the link in one write: fewer ssh packets,
   * and none left behind an unacknowledged one on a hop without TCP_NODELAY. The flush is a tick queued from
   * a microtask, so it runs once every microtask has: not at the event loop's next check phase, which a
   * relay hub watching many busy dirs does not reach while inotify keeps handing it events (a burst of
   * completions was held there for ~250 ms).
   */
  private batch(): void {
    if (this.corked) return;
    this.corked = true;
    this.writable.cork();
    queueMicrotask(() =>
      process.nextTick(() => {
        this.corked = false;
        this.writable.uncork();
      }),
    );
  }

  private afterDrain(cb: () => void): void {
    const done = (): void => {
      this.writable.off("drain", done);
      this.off("closed", done);
      cb();
    };
    this.writable.on("drain", done);
    this.on("closed", done);
  }

  private take(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= HEAD && !this.closed) {
      const id = this.buf.readUInt32BE(0);
      const kind = this.buf.readUInt8(4);
      const len = this.buf.readUInt32BE(5);
      if (kind !== OPEN && kind !== DATA && kind !== END)
        throw new ChannelError(`unknown frame kind ${kind}`);
      if (len > (kind === OPEN ? MAX_OPEN : kind === DATA ? PIECE : 0))
        throw new ChannelError(`a ${len}-byte frame is larger than its kind allows`);
      if (this.buf.length < HEAD + len) return;
      const payload = this.buf.subarray(HEAD, HEAD + len);
      this.buf = this.buf.subarray(HEAD + len);
      this.frame(id, kind, payload);
    }
  }

  private frame(id: number, kind: number, payload: Buffer): void {
    if (kind === OPEN) {
      if (this.channels.has(id) || this.listenerCount("channel") === 0)
        throw new ChannelError(`channel ${id} opened twice, or on the side that opens`);
      let info: unknown;
      try {
        info = JSON.parse(payload.toString("utf8"));
      } catch {
        throw new ChannelError(`channel ${id}: its open is not JSON`);
      }
      if (typeof info !== "object" || info === null || Array.isArray(info))
        throw new ChannelError(`channel ${id}: its open is not an object`);
      this.emit("channel", info, this.channel(id));
      return;
    }
    const c = this.channels.get(id);
    // Bytes or an end for a channel this side already finished with: it was ended here meanwhile.
    if (!c) return;
    if (kind === DATA) {
      if (!c.got) c.stream.push(Buffer.from(payload));
      return;
    }
    c.got = true;
    c.stream.push(null);
    if (c.sent) this.channels.delete(id);
  }
}
