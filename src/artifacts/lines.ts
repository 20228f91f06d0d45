/** Splits a byte stream on LF only (never on U+2028/U+2029 or CR), holding an unterminated tail. */
export class LineSplitter {
  private tail: Buffer = Buffer.alloc(0);
  private dropping = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly onOversize: (bytes: number) => void = () => {},
  ) {}

  /** Feeds bytes; returns the complete lines (without the LF), oversized lines dropped and reported. */
  push(chunk: Buffer): Buffer[] {
    const out: Buffer[] = [];
    let buf = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl < 0) break;
      if (this.dropping) {
        this.dropping = false;
      } else {
        out.push(buf.subarray(start, nl));
      }
      start = nl + 1;
    }
    buf = buf.subarray(start);
    if (!this.dropping && buf.length > this.maxLineBytes) {
      this.onOversize(buf.length);
      this.dropping = true;
    }
    this.tail = this.dropping ? Buffer.alloc(0) : Buffer.from(buf);
    return out;
  }

  /** The unterminated remainder (e.g. when the stream ended without a final LF). */
  flush(): Buffer | undefined {
    const rest = this.tail;
    this.tail = Buffer.alloc(0);
    return rest.length > 0 && !this.dropping ? rest : undefined;
  }
}
