import * as fs from "node:fs";
import * as path from "node:path";
import { ensureDir, writeJsonAtomic } from "../util/fsx.js";
import { pokeHost } from "../util/poke.js";
import { readJsonBounded } from "../util/safe-read.js";

/**
 * One requested turn waiting for the child host. File name `<arrival>-<turnId>.json`: `arrival` is a
 * 16-digit sequence number claimed exclusively (see claimArrival), so lexical order is arrival order
 * whatever the sender's clock says (a turn id's timestamp is the sender's clock, and can be wrong).
 */
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

const ARRIVAL_DIGITS = 16;
const INBOX_NAME = /^(\d{16})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.json$/;

/** The arrival claims of a child: arrivals/<n>, next to its inbox/. */
const arrivalsDir = (inboxDir: string): string => path.join(path.dirname(inboxDir), "arrivals");

/**
 * The next arrival number of a child: one past the highest claimed, taken by creating arrivals/<n> with
 * O_EXCL, so two senders at once never get the same one (the loser takes the next). Claims below it are
 * pruned; the highest always stays, so the sequence survives an empty inbox.
 */
function claimArrival(inboxDir: string): number {
  const dir = arrivalsDir(inboxDir);
  ensureDir(dir);
  const claimed = fs
    .readdirSync(dir)
    .filter((n) => /^\d{1,16}$/.test(n))
    .map(Number);
  let n = claimed.reduce((a, b) => Math.max(a, b), 0) + 1;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(path.join(dir, String(n)), "wx", 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      n += 1;
    }
  }
  for (const old of claimed) if (old < n) fs.rmSync(path.join(dir, String(old)), { force: true });
  return n;
}

export function writeInboxItem(inboxDir: string, item: InboxItem): string {
  const arrival = String(claimArrival(inboxDir)).padStart(ARRIVAL_DIGITS, "0");
  const file = path.join(inboxDir, `${arrival}-${item.turnId}.json`);
  writeJsonAtomic(file, item);
  pokeHost(path.dirname(inboxDir));
  return file;
}

/** The turn id an inbox file is named after; undefined for a name that is not `<arrival>-<turnId>.json`. */
export function inboxTurnId(file: string): string | undefined {
  return INBOX_NAME.exec(path.basename(file))?.[2];
}

/** Pending item files in arrival order (temp files start with "." and are skipped). */
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

/**
 * Reads an inbox file; undefined if it is not a well-formed item named after its own turnId (ids become paths),
 * or not a regular file of at most MAX_INBOX_ITEM_BYTES (a symlink, FIFO or device is never read).
 */
export function readInboxItem(file: string): InboxItem | undefined {
  try {
    const item = readJsonBounded<Partial<InboxItem>>(file, MAX_INBOX_ITEM_BYTES);
    if (typeof item.turnId !== "string" || typeof item.prompt !== "string") return undefined;
    if (inboxTurnId(file) !== item.turnId) return undefined;
    return { ...item, source: item.source === "typed" ? "typed" : "inbox" } as InboxItem;
  } catch {
    return undefined;
  }
}
