/**
 * Cancellation snapshots (`muster cancel --snapshot`): the bounded last context of a child, kept in its
 * artifact dir before it is stopped, so work cancelled by mistake is not lost: the task, the answer so far,
 * the conversation's tail, the pane's last lines and the tool call that was open. `status` shows it and
 * `spawn --resume` hands it to the next turn (artifacts/README.md, "snapshots/").
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { writeJsonAtomic } from "../util/fsx.js";
import { readJsonBounded } from "../util/safe-read.js";
import { childFiles } from "./layout.js";

export interface CancelSnapshot {
  v: 1;
  /** The turn it belongs to: the one cancelled, or the last one when the child was idle. */
  turnId: string;
  takenAt: string;
  /** Whether that turn was still running when the snapshot was taken. */
  running: boolean;
  /** The head of the turn's prompt. */
  prompt: string;
  /** The end of the answer written so far. */
  answerTail: string;
  /** The last messages of the conversation before this turn, each cut short. */
  conversationTail: { role: string; text: string }[];
  /** The last lines of the pane. */
  pane: string;
  /** A tool call started and not finished when the snapshot was taken. */
  openTool?: { name: string; summary: string; startedAt: string };
}

/** Bounds of each part: the whole file stays under 64 KiB. */
export const SNAPSHOT_BOUNDS = { prompt: 4096, answer: 16384, message: 2048, messages: 8, pane: 16384 };
const MAX_FILE = 128 * 1024;

/** The tail of `s`, at most `max` characters, with a mark where it was cut. */
export const tailOf = (s: string, max: number): string => (s.length > max ? `…${s.slice(-(max - 1))}` : s);
export const headOf = (s: string, max: number): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** snapshots/<turnId>.json, relative to the artifact dir. */
export const snapshotPath = (turnId: string): string => path.join("snapshots", `${turnId}.json`);

export function writeCancelSnapshot(dir: string, snap: CancelSnapshot): string {
  fs.mkdirSync(childFiles(dir).snapshots, { recursive: true, mode: 0o700 });
  const rel = snapshotPath(snap.turnId);
  writeJsonAtomic(path.join(dir, rel), snap);
  return rel;
}

/** The snapshot of one turn, or undefined (none, or not readable as one). */
export function readCancelSnapshot(dir: string, turnId: string): CancelSnapshot | undefined {
  if (!/^[0-9a-f-]{36}$/.test(turnId)) return undefined;
  try {
    const s = readJsonBounded<CancelSnapshot>(path.join(dir, snapshotPath(turnId)), MAX_FILE);
    return s && s.v === 1 && s.turnId === turnId ? s : undefined;
  } catch {
    return undefined;
  }
}

/** Quoted, line by line: what the cancelled turn said is shown to the next one, never taken as its request. */
const quote = (text: string): string =>
  text
    .split("\n")
    .map((l) => `> ${l}`)
    .join("\n");

/** The snapshot as text for the next turn's prompt. */
export function snapshotText(s: CancelSnapshot): string {
  return [
    "Your previous turn was cancelled before it finished; muster kept where it stood.",
    `The task was:\n${quote(s.prompt)}`,
    ...(s.openTool ? [`A tool call was open: ${s.openTool.name} ${s.openTool.summary}`] : []),
    ...(s.answerTail ? [`Your answer so far (its end):\n${quote(s.answerTail)}`] : []),
    ...(s.pane ? [`The last lines of your pane:\n${quote(s.pane)}`] : []),
  ].join("\n\n");
}
