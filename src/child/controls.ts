import * as fs from "node:fs";
import * as path from "node:path";
import { readJsonBounded } from "../util/safe-read.js";

// `muster done --file` carries an answer (a snapshot is at most 1 MiB): JSON-escaped at most 6 MiB, plus slack.
const MAX_CONTROL_BYTES = 6 * 1024 * 1024 + 64 * 1024;

/**
 * A request from the agent inside the pane, written to control/: `muster progress|done|error`, and
 * `muster ask` (kind ask when it asks, answered when it got the answer or gave up waiting).
 */
export type ControlRequest =
  | { kind: "progress" | "done" | "error"; text: string }
  | { kind: "ask"; text: string; requestId: string; choices?: string[] }
  | { kind: "answered"; text: string; requestId: string; outcome: "answered" | "timeout" };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Whether a parsed file is a well-formed request (anything else is dropped). */
function wellFormed(r: unknown): r is ControlRequest {
  const q = r as Record<string, unknown> | null;
  if (!q || typeof q.text !== "string") return false;
  if (q.kind === "progress" || q.kind === "done" || q.kind === "error") return true;
  if (typeof q.requestId !== "string" || !UUID.test(q.requestId)) return false;
  if (q.kind === "ask")
    return (
      q.text.trim() !== "" &&
      (q.choices === undefined ||
        (Array.isArray(q.choices) &&
          q.choices.length > 0 &&
          q.choices.every((c) => typeof c === "string" && c !== "")))
    );
  return q.kind === "answered" && (q.outcome === "answered" || q.outcome === "timeout");
}

/** Watches control/ and hands each request over once (the file is removed after reading). */
export class ControlWatcher {
  private readonly watcher: fs.FSWatcher | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly dir: string,
    private readonly onRequest: (r: ControlRequest) => void,
  ) {
    try {
      this.watcher = fs.watch(dir, () => this.drain());
      this.watcher.on("error", () => {});
    } catch {
      this.watcher = undefined;
    }
    // fs.watch is a hint; the poll catches a notification that never came.
    this.timer = setInterval(() => this.drain(), 2000);
    this.drain();
  }

  /** Reads and removes every pending request, oldest first. */
  drain(): void {
    let names: string[];
    try {
      names = fs
        .readdirSync(this.dir)
        .filter((n) => n.endsWith(".json") && !n.startsWith("."))
        .sort();
    } catch {
      return;
    }
    for (const name of names) {
      const file = path.join(this.dir, name);
      let req: unknown;
      try {
        req = readJsonBounded<unknown>(file, MAX_CONTROL_BYTES);
      } catch {
        req = undefined;
      }
      fs.rmSync(file, { force: true });
      if (wellFormed(req)) this.onRequest(req);
    }
  }

  close(): void {
    this.watcher?.close();
    clearInterval(this.timer);
  }
}
