import { MusterError } from "../base/errors.js";
import { randomBytes } from "./random.js";

let lastMs = 0;
let lastSeq = 0;

/** UUIDv7 (RFC 9562): 48-bit ms timestamp + random; monotonic within one process, so ids sort by creation. */
export function uuidv7(now: number = Date.now()): string {
  let ms = now;
  if (ms <= lastMs) {
    ms = lastMs;
    lastSeq += 1;
  } else {
    lastSeq = 0;
  }
  lastMs = ms;
  const b = randomBytes(16);
  b.writeUIntBE(ms, 0, 6);
  // 12-bit counter in rand_a keeps ids from one process strictly ordered within a millisecond.
  b[6] = 0x70 | ((lastSeq >> 8) & 0x0f);
  b[7] = lastSeq & 0xff;
  b[8] = 0x80 | (b[8]! & 0x3f);
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * The short form shown to people: the last 8 hex digits. UUIDv7 ids begin with a timestamp, so ids
 * made close together share their prefix; the tail is random. Commands accept it (a unique suffix).
 */
export const shortId = (id: string): string => id.slice(-8);

/** The creation time (epoch ms) encoded in a UUIDv7. */
export const uuidv7Time = (id: string): number => Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16);

const FULL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ID_PREFIX = /^[0-9a-f-]{4,36}$/;

export const isFullId = (s: string): boolean => FULL_ID.test(s);

/** Validates a user-given child id or unique prefix (≥ 4 chars) before it can touch a path. */
export function assertIdOrPrefix(s: string, what = "child id"): string {
  const v = s.trim().toLowerCase();
  if (!ID_PREFIX.test(v)) {
    throw new MusterError(
      "invalid_id",
      `invalid ${what} ${JSON.stringify(s)}: expected a UUID, or at least 4 of its first or last hex digits`,
    );
  }
  return v;
}

/** Validates a full id (primary, child, turn) read from disk or the environment. */
export function assertFullId(s: string, what = "id"): string {
  if (!FULL_ID.test(s))
    throw new MusterError("invalid_id", `invalid ${what} ${JSON.stringify(s)}: expected a UUID`);
  return s;
}
