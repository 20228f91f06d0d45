/**
 * The store of a child placed elsewhere, read through its local mirror (place/mirror/): everything reads
 * and writes the mirror as a local store does, but the event log is the far side's, appended only there —
 * a record the parent wrote into the mirror would break the byte cursor the mirror resumes from. So a
 * parent's records (settling a lost or cancelled child) travel as an `appends/<id>.json` request: the relay
 * writes them under the far lock only if the far log is still the one the parent decided on (its size),
 * sends the new bytes back, then removes the request. Then either our records are in the mirror, or the log
 * had moved on and the parent decides again on the newer one.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { ensureDir, readJson, writeJsonAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { withFileLock } from "../util/lock.js";
import { type EventInput, type MusterEvent, PROTOCOL_VERSION } from "./events.js";
import { childFiles } from "./layout.js";
import { readAllRecords } from "./reader.js";
import type { ChildStore, EventAppender, LinkDown } from "./store.js";
import { localChildStore } from "./store-local.js";

/** A parent's records for the far log, valid only onto a log of exactly `after` bytes. */
export interface ParentAppend {
  v: 1;
  after: number;
  events: EventInput[];
}

// The far side answers within a round trip; a link that is down answers never, and the caller says so.
const ANSWER_MS = 20_000;
const ATTEMPTS = 5;
const POLL_MS = 15;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Whether `dir` is the mirror of a child placed elsewhere (its place marked it so before the host started). */
export const isMirrored = (dir: string): boolean =>
  fs.lstatSync(childFiles(dir).mirror, { throwIfNoEntry: false })?.isFile() === true;

export function mirroredChildStore(dir: string): ChildStore {
  const store = localChildStore(dir);
  return { ...store, appendAsParent: (fn) => appendThroughMirror(dir, fn), linkDown: () => linkDownOf(dir) };
}

/** The keeper's mark of a link that is down (place/mirror/keeper.ts), read safely; none when it is up. */
function linkDownOf(dir: string): LinkDown | undefined {
  try {
    const mark = readJson<Partial<LinkDown>>(childFiles(dir).mirrorLink);
    return typeof mark.since === "string" && typeof mark.why === "string"
      ? { since: mark.since, why: mark.why }
      : undefined;
  } catch {
    return undefined;
  }
}

async function appendThroughMirror<T>(
  dir: string,
  fn: (events: MusterEvent[], log: EventAppender) => T | Promise<T>,
): Promise<T> {
  const files = childFiles(dir);
  // One parent-side appender at a time on this machine; the far lock orders us against the host.
  return withFileLock(files.events, async () => {
    for (let attempt = 1; ; attempt++) {
      const after = fs.statSync(files.events).size;
      const events = readAllRecords<MusterEvent>(files.events);
      const recorder = new Recorder(events);
      const result = await fn(events, recorder);
      if (recorder.inputs.length === 0) return result;
      const request: ParentAppend = { v: 1, after, events: recorder.inputs };
      ensureDir(files.appends);
      const file = path.join(files.appends, `${uuidv7()}.json`);
      writeJsonAtomic(file, request);
      await answered(file, dir);
      const landed = new Set(
        readAllRecords<MusterEvent>(files.events)
          .filter((e) => e.eventId)
          .map((e) => e.eventId),
      );
      if (recorder.inputs.every((e) => landed.has(e.eventId!))) return result;
      if (attempt >= ATTEMPTS)
        throw new MusterError(
          "busy",
          `the log of child ${path.basename(dir)} kept moving on its place; its record was not written (try again)`,
        );
    }
  });
}

/** Resolves once the request is gone from the mirror (the far side took it: its records, if any, are in). */
async function answered(file: string, dir: string): Promise<void> {
  const deadline = Date.now() + ANSWER_MS;
  while (fs.existsSync(file)) {
    if (Date.now() > deadline)
      throw new MusterError(
        "unreachable",
        `child ${path.basename(dir)}'s place did not take a record within ${ANSWER_MS / 1000}s: its mirror is not connected (see ${path.join(dir, ".mirror.log")})`,
      );
    await sleep(POLL_MS);
  }
}

/** Collects the records `fn` appends, each with its eventId fixed here so their arrival can be checked. */
class Recorder implements EventAppender {
  readonly inputs: EventInput[] = [];
  private seq: number;

  constructor(events: MusterEvent[]) {
    this.seq = events.reduce((m, e) => (typeof e.seq === "number" && e.seq > m ? e.seq : m), 0);
  }

  append(input: EventInput): MusterEvent {
    const withId = { ...input, eventId: input.eventId ?? uuidv7() } as EventInput;
    this.inputs.push(withId);
    this.seq += 1;
    // What the far log will hold: the relay gives it the same seq, onto the log this one was read from.
    return { v: PROTOCOL_VERSION, seq: this.seq, ts: new Date().toISOString(), ...withId } as MusterEvent;
  }
}
