/**
 * A child's folded state kept beside its event log, so a command reading a long-lived child (ls, status, result,
 * send, the MCP tools) folds only what was appended since, not the whole log again: ~130 ms a command for a
 * 3.3 MB log (70 turns of 100 tool calls) before it, in every one of them. The log is append-only, so the state
 * at a byte offset never changes.
 *
 * Kept only once the log holds CHECKPOINT_BYTES past the last one (a short log folds in well under a millisecond),
 * written by whichever reader gets there, atomically and without fsync: a checkpoint lost in a crash, refused or
 * unreadable only costs one whole fold. Trusted only for the same file (inode) grown from it whose line ending at
 * its offset is the one it folded last, byte for byte (a record's eventId is its own: a log rewritten or replaced
 * under the same name is not the one folded), and from the same fold code (its fingerprint: a build that folds
 * events differently folds the whole log again).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { CompletionEvent, MusterEvent } from "../artifacts/events.js";
import type { MalformedLine, NdjsonReader } from "../artifacts/reader.js";
import { writeFileAtomic } from "../util/fsx.js";
import { openRegular, readJsonBoundedIfExists } from "../util/safe-read.js";
import { foldLive } from "./live-state.js";
import { applyEvents, type ChildState, emptyState } from "./state.js";

export const CHECKPOINT_FILE = ".state.json";
/** Log bytes folded past the last checkpoint (or from the start) before a new one is written. */
export const CHECKPOINT_BYTES = 64 * 1024;
// The state of a log of a few hundred MB: completions and turns are small, a turn's a few hundred bytes.
const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024;
/**
 * The longest last line before its offset a checkpoint is kept for (records are ~0.3–2 KB): that line, whole, is
 * how a checkpoint knows the log it folded (each record carries an eventId of its own).
 */
const TAIL_BYTES = 4096;

/** The first malformed lines of a log and how many there are in all (loadChild reports them). */
export interface MalformedReport {
  count: number;
  spans: MalformedLine[];
}

interface Checkpoint {
  v: 1;
  fold: string;
  ino: number;
  cursor: number;
  /** hash53 of the log's last line before `cursor` (its LF included). */
  last: string;
  state: Omit<ChildState, "completions"> & { completions: [string, unknown][] };
  malformed: MalformedReport;
}

// What makes the same events into a state: when this code changes, a checkpoint of another build is not used.
// Worked out when a checkpoint is first read or written, not by every command that loads this module.
let fold: string | undefined;
const foldId = (): string => {
  fold ??= hash53(Buffer.from(`${applyEvents}\n${foldLive}`));
  return fold;
};

/**
 * The child's state folded from its log (a checkpoint's, then what follows it), and its malformed lines; may
 * write a new checkpoint. `reader(cursor, onMalformed)` reads the log from a byte offset; `keep` records one
 * malformed line in the report (bounded as the caller wants).
 */
export function foldLog(
  dir: string,
  events: string,
  reader: (cursor: number, onMalformed: (m: MalformedLine) => void) => NdjsonReader<MusterEvent>,
  keep: (report: MalformedReport, m: MalformedLine) => void,
): { state: ChildState; malformed: MalformedReport } {
  const file = path.join(dir, CHECKPOINT_FILE);
  const from = usable(file, events);
  const folded = from ? foldFrom(from, reader, keep) : undefined;
  // From the start the log cannot turn out shorter than where it started.
  const done = folded ?? foldFrom(undefined, reader, keep)!;
  if (done.cursor - (folded ? from!.cursor : 0) >= CHECKPOINT_BYTES) save(file, events, done);
  return { state: done.state, malformed: done.malformed };
}

interface Folded {
  state: ChildState;
  malformed: MalformedReport;
  cursor: number;
}

/** Folds the log from a checkpoint (or the start); undefined when the log turned out to have shrunk meanwhile. */
function foldFrom(
  from: Checkpoint | undefined,
  reader: (cursor: number, onMalformed: (m: MalformedLine) => void) => NdjsonReader<MusterEvent>,
  keep: (report: MalformedReport, m: MalformedLine) => void,
): Folded | undefined {
  const state = from ? revive(from.state) : emptyState();
  const malformed: MalformedReport = from
    ? { count: from.malformed.count, spans: [...from.malformed.spans] }
    : { count: 0, spans: [] };
  let startedOver = false;
  const r = reader(from?.cursor ?? 0, (m) => {
    // The reader saw the file shorter than the checkpoint's offset and read it again from 0.
    if (from && m.length === 0 && m.offset === from.cursor) startedOver = true;
    else keep(malformed, m);
  });
  const events = r.readNew();
  if (startedOver) return undefined;
  applyEvents(state, events);
  return { state, malformed, cursor: r.cursor };
}

/** The checkpoint in `file` when it is one of this log as it is now, by this fold; else undefined. */
function usable(file: string, events: string): Checkpoint | undefined {
  let cp: Checkpoint | undefined;
  try {
    cp = readJsonBoundedIfExists<Checkpoint>(file, MAX_CHECKPOINT_BYTES);
  } catch {
    return undefined; // refused (a symlink, not a file) or not JSON: folded anew, and written over
  }
  if (!cp || cp.v !== 1 || cp.fold !== foldId() || !Number.isSafeInteger(cp.cursor) || cp.cursor < 0)
    return undefined;
  if (!Array.isArray(cp.state?.completions) || !Array.isArray(cp.state.turns) || !cp.malformed)
    return undefined;
  const now = lastLineBefore(events, cp.cursor);
  return now && now.ino === cp.ino && now.line === cp.last ? cp : undefined;
}

/**
 * A 53-bit hash (cyrb53) in hex: tells a line or a build's code from another in well under a millisecond, where
 * SHA-256 in plain JS (node:crypto is not loaded by the CLI's quick commands) took ~7 ms at every start. Not a
 * defence against a forger, who could as well write the log itself.
 */
function hash53(bytes: Uint8Array): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (const c of bytes) {
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16);
}

/**
 * The log's inode and the hash53 of its last line before `cursor`; undefined when the log is shorter than that,
 * or the bytes before `cursor` do not end a line of at most TAIL_BYTES.
 */
function lastLineBefore(events: string, cursor: number): { ino: number; line: string } | undefined {
  let opened: { fd: number; size: number; ino: number };
  try {
    opened = openRegular(events);
  } catch {
    return undefined;
  }
  try {
    if (opened.size < cursor || cursor < 2) return undefined;
    const n = Math.min(TAIL_BYTES, cursor);
    const buf = Buffer.alloc(n);
    if (fs.readSync(opened.fd, buf, 0, n, cursor - n) !== n) return undefined;
    if (buf.at(-1) !== 0x0a) return undefined;
    const start = buf.lastIndexOf(0x0a, n - 2) + 1;
    if (start === 0 && n < cursor) return undefined; // the line goes on before what was read
    return { ino: opened.ino, line: hash53(buf.subarray(start)) };
  } finally {
    fs.closeSync(opened.fd);
  }
}

function save(file: string, events: string, f: Folded): void {
  const at = lastLineBefore(events, f.cursor);
  if (!at) return;
  const cp: Checkpoint = {
    v: 1,
    fold: foldId(),
    ino: at.ino,
    cursor: f.cursor,
    last: at.line,
    state: { ...f.state, completions: [...f.state.completions] },
    malformed: f.malformed,
  };
  try {
    // Not durable: a checkpoint lost in a crash costs one whole fold.
    writeFileAtomic(file, JSON.stringify(cp), undefined, false);
  } catch {
    // A read-only or full state root: the next reader folds the whole log, as before checkpoints.
  }
}

/** The state as applyEvents left it: completions a Map, and each turn's completion that same record. */
function revive(s: Checkpoint["state"]): ChildState {
  const completions: ChildState["completions"] = new Map(s.completions as [string, CompletionEvent][]);
  const state: ChildState = { ...s, completions };
  for (const t of state.turns) if (t.completion) t.completion = completions.get(t.turnId) ?? t.completion;
  return state;
}
