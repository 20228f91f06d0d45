/**
 * The pty holder's socket protocol: length-prefixed frames, `[type u8][length u32 BE][payload]`. A client
 * opens with HELLO (its role, and a viewer's terminal size); the holder answers INFO, then a viewer gets
 * REPLAY (the scrollback so far) and OUTPUT as it comes, and EXIT when the program ends. A control client
 * (muster's own calls) sends one request (PASTE, CAPTURE, RESIZE) and reads one answer (ACK or TEXT).
 */

export const FRAME = {
  /** client → holder, JSON Hello. */
  HELLO: 1,
  /** client → holder, raw bytes typed by a viewer. */
  INPUT: 2,
  /** client → holder, JSON {cols, rows}. */
  RESIZE: 3,
  /** client → holder, JSON {lines}: the rendered screen and scrollback, answered by TEXT. */
  CAPTURE: 4,
  /** client → holder, JSON {text, enter}: typed as a paste (bracketed if the program asked), answered by ACK. */
  PASTE: 5,
  /** holder → client, JSON Info: the answer to HELLO. */
  INFO: 10,
  /** holder → viewer, raw output bytes. */
  OUTPUT: 11,
  /** holder → viewer, the output kept so far (scrollback), sent once after INFO. */
  REPLAY: 12,
  /** holder → client, UTF-8 text (a capture). */
  TEXT: 13,
  /** holder → client, JSON {ok: true} or {error}. */
  ACK: 14,
  /** holder → viewer, JSON {exitCode, signal}: the program ended; the holder closes next. */
  EXIT: 15,
} as const;

export type FrameType = (typeof FRAME)[keyof typeof FRAME];

export interface Frame {
  type: number;
  payload: Buffer;
}

export interface Hello {
  role: "viewer" | "control";
  cols?: number;
  rows?: number;
}

export interface Info {
  /** The holder's pid and the program's (the pty's session leader). */
  pid: number;
  childPid: number;
  cols: number;
  rows: number;
}

const HEADER = 5;
/** A frame bigger than this is a broken or hostile peer, not a message: the connection is dropped. */
export const MAX_FRAME = 16 * 1024 * 1024;

export function encodeFrame(type: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : payload;
  const head = Buffer.alloc(HEADER);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

export const jsonFrame = (type: number, value: unknown): Buffer => encodeFrame(type, JSON.stringify(value));

/** Splits a byte stream into frames; keeps a partial frame until the rest arrives. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);

  /** The whole frames completed by `chunk`; throws on a frame over MAX_FRAME. */
  push(chunk: Buffer): Frame[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: Frame[] = [];
    while (this.buf.length >= HEADER) {
      const len = this.buf.readUInt32BE(1);
      if (len > MAX_FRAME) throw new Error(`frame of ${len} bytes is over the ${MAX_FRAME}-byte limit`);
      if (this.buf.length < HEADER + len) break;
      out.push({ type: this.buf.readUInt8(0), payload: this.buf.subarray(HEADER, HEADER + len) });
      this.buf = this.buf.subarray(HEADER + len);
    }
    return out;
  }
}

/** A JSON payload as an object; null when it is not one. */
export function parseJson<T>(payload: Buffer): Partial<T> | null {
  try {
    const v = JSON.parse(payload.toString("utf8"));
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Partial<T>) : null;
  } catch {
    return null;
  }
}

/** A terminal dimension within what a pty takes; `fallback` for anything else. */
export function clampSize(n: unknown, fallback: number): number {
  return typeof n === "number" && Number.isInteger(n) && n >= 2 && n <= 1000 ? n : fallback;
}
