import * as fs from "node:fs";
import { listInbox, writeInboxItem } from "../artifacts/inbox.js";
import { uuidv7 } from "../util/ids.js";

// fs.watch is only a hint; this bounds the wait when a notification is lost.
const SAFETY_POLL_MS = 2000;

/**
 * The child host's source of turns: files in inbox/ (muster send, spawn) and lines a person
 * types into the pane. Typed lines go through the inbox too, so every turn has one durable path.
 */
export class TurnSource {
  private waiter: (() => void) | undefined;
  private readonly watcher: fs.FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;
  private typed = "";

  constructor(
    private readonly inboxDir: string,
    stdin: NodeJS.ReadStream | undefined,
  ) {
    try {
      this.watcher = fs.watch(inboxDir, () => this.wake());
      this.watcher.on("error", () => {});
    } catch {
      this.watcher = undefined;
    }
    this.timer = setInterval(() => this.wake(), SAFETY_POLL_MS);
    if (stdin) {
      stdin.on("data", (chunk: Buffer) => this.onTyped(chunk.toString("utf8")));
      stdin.on("error", () => {});
    }
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  private onTyped(s: string): void {
    this.typed += s;
    const lines = this.typed.split(/\r?\n|\r/);
    this.typed = lines.pop() ?? "";
    for (const line of lines) {
      if (line.trim() === "") continue;
      writeInboxItem(this.inboxDir, {
        v: 1,
        turnId: uuidv7(),
        prompt: line,
        source: "typed",
        createdAt: new Date().toISOString(),
      });
    }
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
    this.watcher?.close();
    clearInterval(this.timer);
  }
}
