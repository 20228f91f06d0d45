import * as fs from "node:fs";
import * as path from "node:path";
import { writeJsonAtomic } from "../util/fsx.js";
import { pokeHost } from "../util/poke.js";
import { readJsonBounded } from "../util/safe-read.js";

/** One requested turn waiting for the child host. File name `<turnId>.json`: UUIDv7, so lexical order is arrival order. */
export interface InboxItem {
  v: 1;
  turnId: string;
  prompt: string;
  source: "inbox" | "typed";
  model?: string;
  reasoning?: string;
  /** A JSON Schema the runner's CLI enforces on the answer (a structured worker's first turn). */
  outputSchema?: object;
  /** A cancellation snapshot (snapshots/<turnId>.json) the runner gets ahead of the prompt (spawn --resume). */
  context?: string;
  createdAt: string;
}

export function writeInboxItem(inboxDir: string, item: InboxItem): string {
  const file = path.join(inboxDir, `${item.turnId}.json`);
  writeJsonAtomic(file, item);
  pokeHost(path.dirname(inboxDir));
  return file;
}

/** Pending item files, oldest first (temp files start with "." and are skipped). */
export function listInbox(inboxDir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(inboxDir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  return names
    .filter((n) => n.endsWith(".json") && !n.startsWith("."))
    .sort()
    .map((n) => path.join(inboxDir, n));
}

// A prompt is at most 1 MiB (core/host-launch.ts); JSON-escaped (\u0001 is 6 bytes) at most 6 MiB, plus fields.
export const MAX_INBOX_ITEM_BYTES = 6 * 1024 * 1024 + 64 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Reads an inbox file; undefined if it is not a well-formed item named after its own turnId (ids become paths),
 * or not a regular file of at most MAX_INBOX_ITEM_BYTES (a symlink, FIFO or device is never read).
 */
export function readInboxItem(file: string): InboxItem | undefined {
  try {
    const item = readJsonBounded<Partial<InboxItem>>(file, MAX_INBOX_ITEM_BYTES);
    if (typeof item.turnId !== "string" || !UUID.test(item.turnId) || typeof item.prompt !== "string")
      return undefined;
    if (path.basename(file) !== `${item.turnId}.json`) return undefined;
    return { ...item, source: item.source === "typed" ? "typed" : "inbox" } as InboxItem;
  } catch {
    return undefined;
  }
}
