/**
 * Splits a byte stream on LF only (never on U+2028/U+2029 or CR), holding an unterminated tail.
 * The tail is kept as a list of chunks and joined once its line ends, so a long line costs its own size
 * (never more than `maxLineBytes` plus one chunk), not a copy per chunk.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private partBytes = 0;
  private dropping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onOversize: (bytes: number) => void = () => {},
  ) {}

  /** Feeds bytes; returns the complete lines (without the LF), oversized lines dropped and reported. */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl < 0) break;
      if (this.dropping) this.dropping = false;
      else if (this.partBytes > 0) out.push(Buffer.concat([...this.parts, chunk.subarray(start, nl)]));
      else out.push(chunk.subarray(start, nl));
      this.parts = [];
      this.partBytes = 0;
      start = nl + 1;
    }
    if (this.dropping || start === chunk.length) return out;
    // A copy when the chunk also held earlier lines: the tail must not pin the whole chunk.
    const rest = start > 0 ? Buffer.from(chunk.subarray(start)) : chunk;
    this.parts.push(rest);
    this.partBytes += rest.length;
    if (this.partBytes > this.maxLineBytes) {
      this.onOversize(this.partBytes);
      this.dropping = true;
      this.parts = [];
      this.partBytes = 0;
    }
    return out;
  }

  /** The unterminated remainder (e.g. when the stream ended without a final LF). */
  flush(): Buffer | undefined {
    const rest = this.partBytes > 0 && !this.dropping ? Buffer.concat(this.parts) : undefined;
    this.parts = [];
    this.partBytes = 0;
    return rest;
  }
}

/** What a turn's record says of an agent's line too long to read (it was dropped, not parsed). */
export const droppedLineNote = (bytes: number, limit: number): string =>
  `truncated: dropped a ${bytes}-byte line from the agent (over the ${limit / 1024 / 1024} MiB line limit); the answer may lack what it held`;
