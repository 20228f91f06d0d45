import * as fs from "node:fs";
import { appendAll, endsUnterminated, openAppend } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { type EventInput, type MusterEvent, PROTOCOL_VERSION } from "./events.js";
import { MAX_RECORD_BYTES, readAllRecords } from "./reader.js";

/**
 * Records that only narrate a turn in progress (what a tool did, tokens so far, a line of progress): an agent
 * may write hundreds a turn, and an fsync each held the host ~0.2–5 ms apiece, more while other hosts sync.
 * They are written without one: the next record that counts (the completion, a question, the host's exit)
 * is fsync'd, and that flushes the whole file, these with it. A crash of the machine mid-turn may lose the
 * last of them; the turn they narrate is then lost too.
 */
const NARRATIVE: ReadonlySet<string> = new Set(["progress", "tool_activity", "usage"]);

/**
 * Append-only writer of events.ndjson: one write() per record, fsync after each (but a narrative one), seq
 * strictly increasing.
 */
export class EventLog {
  /**
   * Where an append that failed goes instead of being thrown: it returns true when it took care of the failure
   * (the child host fails its running turn with it), and the record is then not written. Unset: thrown.
   */
  divert: ((e: unknown, input: EventInput) => boolean) | undefined;

  /** Told of each record once it is written (never of one that was not); what it does cannot fail an append. */
  onAppended: ((e: MusterEvent) => void) | undefined;

  private constructor(
    readonly file: string,
    private fd: number,
    private seq: number,
  ) {}

  /** Opens (creating if needed) and continues after the highest seq already in the file. */
  static open(file: string): EventLog {
    const existing = readAllRecords<{ seq?: unknown }>(file);
    let seq = 0;
    for (const r of existing) if (typeof r.seq === "number" && r.seq > seq) seq = r.seq;
    const fd = openAppend(file);
    return new EventLog(file, fd, seq);
  }

  /**
   * Appends one event (durably, but a narrative one) and returns the full record (see `divert` for one that
   * could not be written).
   */
  append(input: EventInput): MusterEvent {
    const { eventId, ...rest } = input;
    const event = {
      v: PROTOCOL_VERSION,
      eventId: eventId ?? uuidv7(),
      seq: this.seq + 1,
      ts: new Date().toISOString(),
      ...rest,
    } as MusterEvent;
    const line = Buffer.from(`${JSON.stringify(event)}\n`, "utf8");
    if (line.length > MAX_RECORD_BYTES) throw new Error(`event record of ${line.length} bytes exceeds 1 MiB`);
    // Checked before every record, not only at open: a writer that died mid-line, or junk appended by
    // anyone while this host idles, must not swallow the record that follows. LF and record: one write.
    try {
      const bytes = endsUnterminated(this.fd) ? Buffer.concat([Buffer.from("\n"), line]) : line;
      appendAll(this.fd, bytes, !NARRATIVE.has(event.type));
    } catch (e) {
      if (this.divert?.(e, input)) return event;
      throw e;
    }
    this.seq += 1;
    try {
      this.onAppended?.(event);
    } catch {
      // An observer's trouble is its own: the record is written.
    }
    return event;
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }
}
