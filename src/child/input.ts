import { listInbox, writeInboxItem } from "../artifacts/inbox.js";
import { storageError } from "../base/storage-errors.js";
import { uuidv7 } from "../util/ids.js";
import { FALLBACK_POLL_MS } from "./dir-watch.js";
import { PokedDir } from "./pokes.js";

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The child host's source of turns: files in inbox/ (muster send, spawn) and lines a person
 * types into the pane. Typed lines go through the inbox too, so every turn has one durable path.
 */
export class TurnSource {
  private waiter: (() => void) | undefined;
  private readonly watch: PokedDir;
  // Bytes, not text: a character split across two reads must not become two U+FFFD.
  private typed: Buffer = Buffer.alloc(0);

  constructor(
    private readonly inboxDir: string,
    stdin: NodeJS.ReadStream | undefined,
    /** Told about a typed line that was not taken (one line, for the pane). */
    private readonly onRefused: (why: string) => void = () => {},
    pollMs?: number,
  ) {
    this.watch = new PokedDir(inboxDir, () => this.wake(), pollMs);
    if (this.watch.polledOnly)
      onRefused(
        `inbox/ cannot be watched (inotify instances used up?): polling it every ${FALLBACK_POLL_MS} ms`,
      );
    if (stdin) {
      stdin.on("data", (chunk: Buffer) => this.onTyped(chunk));
      stdin.on("error", () => {});
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private onTyped(chunk: Buffer): void {
    let buf = Buffer.concat([this.typed, chunk]);
    for (;;) {
      // A line ends at LF, CR or CRLF (terminals send CR for Enter).
      const end = buf.findIndex((b) => b === 0x0a || b === 0x0d);
      if (end < 0) break;
      const next = buf[end] === 0x0d && buf[end + 1] === 0x0a ? end + 2 : end + 1;
      this.takeLine(buf.subarray(0, end));
      buf = buf.subarray(next);
    }
    this.typed = Buffer.from(buf);
  }

  private takeLine(bytes: Buffer): void {
    let line: string;
    try {
      line = strictUtf8.decode(bytes);
    } catch {
      // Prompts are UTF-8 text end to end: refused, never silently replaced by U+FFFD.
      this.onRefused("typed line ignored: it is not valid UTF-8");
      return;
    }
    if (line.trim() === "") return;
    try {
      writeInboxItem(this.inboxDir, {
        v: 1,
        turnId: uuidv7(),
        prompt: line,
        source: "typed",
        createdAt: new Date().toISOString(),
      });
    } catch (e) {
      // A full disk: the line is not taken (said in the pane), and the host goes on.
      this.onRefused(`typed line not taken: ${(storageError(e) as Error).message}`);
      return;
    }
    this.wake();
  }

  /** Resolves with the oldest pending inbox file. */
  async next(): Promise<string> {
    for (;;) {
      const first = listInbox(this.inboxDir)[0];
      if (first) return first;
      await new Promise<void>((r) => {
        this.waiter = r;
      });
    }
  }

  close(): void {
    this.watch.close();
  }
}
