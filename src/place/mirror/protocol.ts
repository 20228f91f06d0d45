/**
 * The mirror stream's framing over any byte duplex (ssh stdio, `docker exec -i`, a pipe into a namespace):
 * each frame is `[header length u32 BE][payload length u32 BE][header: UTF-8 JSON object][payload bytes]`.
 * The header says what the frame is (`t`); the payload carries file or event bytes. Both lengths are bounded
 * and checked before anything is buffered: a bad frame is a broken or hostile peer, and ends the connection.
 *
 * near → far: hello (what the mirror has), put (an outbound file's chunk), del (an outbound file removed),
 * sync (a barrier, answered synced once everything before it is applied there). A child that has never run
 * sends its outbound files and a sync right behind the hello (`eager`), before the far side said what it wants.
 * far → near: welcome (the outbound files it wants, and whether it took the eager ones), events (log bytes from an offset), put (an inbound
 * file's chunk), del (a file gone there), synced (every frame up to a sync applied, and a pass run after),
 * error (why the relay ends).
 */
import { MusterError } from "../../base/errors.js";

export const PROTOCOL_VERSION = 2;
/** A hello lists every file the mirror has: room for many thousands of names. */
export const MAX_HEADER = 4 * 1024 * 1024;
/** File and event bytes travel in chunks of at most this much. */
export const CHUNK = 1024 * 1024;
export const MAX_PAYLOAD = CHUNK;
/** A whole file larger than this is not mirrored (the relay says so on stderr). */
export const MAX_FILE = 64 * 1024 * 1024;
/** meta.json is a few KiB; the seed of a child's first link is bounded well above that. */
const MAX_SEED = 256 * 1024;

/** What one side has of a file: size and modification time (ms, rounded), or its sha256. */
export interface FileStamp {
  size: number;
  mtimeMs: number;
}

export type Header =
  | {
      t: "hello";
      v: number;
      /** events.ndjson: the mirror's size (the cursor) and the sha256 of its last ≤ 4 KiB. */
      events: { size: number; tail: string };
      inbound: Record<string, FileStamp>;
      /** Outbound files the mirror holds, by sha256. */
      outbound: Record<string, string>;
      /**
       * The child's meta.json, for a far side that has no copy of the child yet: the relay then makes its
       * artifact dir from it (a child's first link); with a copy there it is ignored.
       */
      seed?: { meta: string; mtimeMs: number };
      /** The mirror's copy of the child's conversation, when the conversation is carried too. */
      session?: { size: number; tail: string };
      /**
       * The name of a file the feeder made in the mirror dir (and beside its conversation) for this link:
       * a relay that finds it in its own dir is serving the mirror itself (the place shares this disk).
       */
      probe?: string;
      /**
       * The outbound files follow right behind, with a sync (put and sync marked `eager`), saving the round
       * trip to the welcome: the relay takes them only when it wants every one (welcome `took`), else drops them.
       */
      eager?: boolean;
    }
  | { t: "welcome"; v: number; want: string[]; took?: boolean }
  | { t: "events"; at: number }
  /** Conversation bytes from an offset (a relay that carries it). */
  | { t: "session"; at: number }
  /** One chunk of a whole file at `off`; the file is complete once `off + payload` reaches `size`. */
  | { t: "put"; path: string; size: number; off: number; mtimeMs?: number; eager?: boolean }
  /** A file gone; `sha` (outbound files): only that version is removed. */
  | { t: "del"; path: string; sha?: string }
  /** A barrier: answered `synced` once every frame before it is applied and a pass has run. */
  | { t: "sync"; eager?: boolean }
  | { t: "synced" }
  | { t: "error"; message: string };

export interface Frame {
  header: Header;
  payload: Buffer;
}

/** A frame that breaks the protocol: the connection ends with this one line. */
export class ProtocolError extends MusterError {
  constructor(message: string) {
    super("integrity", message);
  }
}

export function encodeFrame(header: Header, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.from(JSON.stringify(header), "utf8");
  if (head.length > MAX_HEADER) throw new ProtocolError(`frame header of ${head.length} bytes is too large`);
  if (payload.length > MAX_PAYLOAD)
    throw new ProtocolError(`frame payload of ${payload.length} bytes is too large`);
  const lens = Buffer.alloc(8);
  lens.writeUInt32BE(head.length, 0);
  lens.writeUInt32BE(payload.length, 4);
  return Buffer.concat([lens, head, payload]);
}

/** Splits a byte stream into frames; a partial frame waits for its rest. Throws ProtocolError. */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private have = 0;

  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.have += chunk.length;
    const out: Frame[] = [];
    for (;;) {
      if (this.have < 8) break;
      const lens = this.peek(8);
      const hlen = lens.readUInt32BE(0);
      const plen = lens.readUInt32BE(4);
      if (hlen > MAX_HEADER || hlen === 0)
        throw new ProtocolError(`frame header length ${hlen} is out of bounds (1..${MAX_HEADER})`);
      if (plen > MAX_PAYLOAD)
        throw new ProtocolError(`frame payload length ${plen} is over the ${MAX_PAYLOAD}-byte limit`);
      if (this.have < 8 + hlen + plen) break;
      const all = this.take(8 + hlen + plen);
      out.push({
        header: parseHeader(all.subarray(8, 8 + hlen)),
        payload: all.subarray(8 + hlen),
      });
    }
    return out;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, n);
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const rest = all.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.have = rest.length;
    return all.subarray(0, n);
  }
}

const isCount = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isSha = (v: unknown): v is string => typeof v === "string" && /^[0-9a-f]{64}$/.test(v);
const isFlag = (v: unknown): boolean => v === undefined || typeof v === "boolean";
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

function parseHeader(bytes: Buffer): Header {
  let h: unknown;
  try {
    h = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new ProtocolError("frame header is not valid JSON");
  }
  if (!isObject(h) || typeof h.t !== "string")
    throw new ProtocolError("frame header is not an object with t");
  const bad = (what: string): never => {
    throw new ProtocolError(`bad ${String(h.t).slice(0, 20)} frame: ${what}`);
  };
  switch (h.t) {
    case "hello": {
      const ev = h.events;
      if (!isCount(h.v)) bad("v");
      if (!isObject(ev) || !isCount(ev.size) || !isSha(ev.tail)) bad("events");
      if (!isObject(h.inbound) || !isObject(h.outbound)) bad("file lists");
      for (const s of Object.values(h.inbound as object))
        if (!isObject(s) || !isCount(s.size) || !isCount(s.mtimeMs)) bad("inbound stamp");
      for (const s of Object.values(h.outbound as object)) if (!isSha(s)) bad("outbound sha");
      if (
        h.session !== undefined &&
        (!isObject(h.session) || !isCount(h.session.size) || !isSha(h.session.tail))
      )
        bad("session");
      if (
        h.probe !== undefined &&
        (typeof h.probe !== "string" || !/^\.mirror-probe-[0-9a-f]{32}$/.test(h.probe))
      )
        bad("probe");
      if (h.seed !== undefined) {
        const seed = h.seed;
        if (!isObject(seed) || typeof seed.meta !== "string" || !isCount(seed.mtimeMs)) bad("seed");
        if ((seed as { meta: string }).meta.length > MAX_SEED) bad(`seed over ${MAX_SEED} characters`);
      }
      if (!isFlag(h.eager)) bad("eager");
      break;
    }
    case "welcome":
      if (!isCount(h.v) || !Array.isArray(h.want) || !h.want.every((p) => typeof p === "string")) bad("want");
      if (!isFlag(h.took)) bad("took");
      break;
    case "events":
    case "session":
      if (!isCount(h.at)) bad("at");
      break;
    case "put":
      if (typeof h.path !== "string" || !isCount(h.size) || !isCount(h.off)) bad("path, size, off");
      if ((h.size as number) > MAX_FILE) bad(`size over the ${MAX_FILE}-byte limit`);
      if (h.mtimeMs !== undefined && !isCount(h.mtimeMs)) bad("mtimeMs");
      if (!isFlag(h.eager)) bad("eager");
      break;
    case "del":
      if (typeof h.path !== "string" || (h.sha !== undefined && !isSha(h.sha))) bad("path, sha");
      break;
    case "sync":
      if (!isFlag(h.eager)) bad("eager");
      break;
    case "synced":
      break;
    case "error":
      if (typeof h.message !== "string") bad("message");
      break;
    default:
      throw new ProtocolError(`unknown frame type ${JSON.stringify(h.t).slice(0, 40)}`);
  }
  return h as Header;
}

/** Writes frames to a stream, waiting for it to drain so a slow peer never grows our memory. */
export class FrameWriter {
  private closed = false;
  constructor(private readonly out: NodeJS.WritableStream) {
    out.on("error", () => {
      this.closed = true;
    });
  }

  async send(header: Header, payload?: Buffer): Promise<void> {
    if (this.closed) return;
    if (!this.out.write(encodeFrame(header, payload)))
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.out.off("drain", done);
          this.out.off("close", done);
          this.out.off("error", done);
          resolve();
        };
        this.out.on("drain", done);
        this.out.on("close", done);
        this.out.on("error", done);
      });
  }

  end(): void {
    this.closed = true;
    this.out.end();
  }
}
