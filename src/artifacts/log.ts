import * as fs from "node:fs";
import { appendAll, FILE_MODE } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { type EventInput, type MusterEvent, PROTOCOL_VERSION } from "./events.js";
import { MAX_RECORD_BYTES, readAllRecords } from "./reader.js";

/** Append-only writer of events.ndjson: one write() per record, fsync after each, seq strictly increasing. */
export class EventLog {
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
    const fd = fs.openSync(
      file,
      fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT,
      FILE_MODE,
    );
    const log = new EventLog(file, fd, seq);
    log.terminateTornTail();
    return log;
  }

  /** Appends one event durably and returns the full record. */
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
    appendAll(this.fd, line);
    this.seq += 1;
    return event;
  }

  close(): void {
    if (this.fd >= 0) fs.closeSync(this.fd);
    this.fd = -1;
  }

  /** A writer killed mid-append leaves a line without LF; end it so our next record starts clean. */
  private terminateTornTail(): void {
    const size = fs.fstatSync(this.fd).size;
    if (size === 0) return;
    const rfd = fs.openSync(this.file, "r");
    try {
      const last = Buffer.alloc(1);
      fs.readSync(rfd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) {
        fs.writeSync(this.fd, "\n");
        fs.fsyncSync(this.fd);
      }
    } finally {
      fs.closeSync(rfd);
    }
  }
}
