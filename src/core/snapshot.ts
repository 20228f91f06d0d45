/**
 * `muster cancel --snapshot`: before a child is stopped, its bounded last context is kept in its artifact
 * dir (snapshots/<turnId>.json, 0600) — shown by `status`, handed to the next turn by `spawn --resume`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type CancelSnapshot,
  headOf,
  SNAPSHOT_BOUNDS,
  snapshotPath,
  tailOf,
  writeCancelSnapshot,
} from "../artifacts/cancel-snapshot.js";
import type { MusterEvent } from "../artifacts/events.js";
import { promptFile } from "../artifacts/layout.js";
import type { Backend } from "../mux/backend.js";
import { loadSession, sessionFileOf } from "../sessions/store.js";
import { openRegular } from "../util/safe-read.js";
import type { LoadedChild } from "./children.js";

/** The last `max` bytes of a regular file as text ("" when it cannot be read). */
function fileTail(file: string, max: number): string {
  let fd: number | undefined;
  try {
    const o = openRegular(file);
    fd = o.fd;
    const n = Math.min(o.size, max);
    const buf = Buffer.alloc(n);
    fs.readSync(fd, buf, 0, n, o.size - n);
    // A cut through a multi-byte character shows as one replacement character at the start: harmless.
    return (o.size > n ? "…" : "") + buf.toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** The last tool call of the turn that started and has not ended. */
function openToolOf(events: MusterEvent[], turnId: string): CancelSnapshot["openTool"] {
  const open: { name: string; summary: string; startedAt: string }[] = [];
  for (const e of events) {
    if (e.type !== "tool_activity" || e.turnId !== turnId) continue;
    if (e.phase === "start") open.push({ name: e.name, summary: e.summary, startedAt: e.ts });
    else {
      const i = open.map((t) => t.name).lastIndexOf(e.name);
      if (i >= 0) open.splice(i, 1);
    }
  }
  return open.at(-1);
}

/** Takes the snapshot of a live child (its open turn, else its last); undefined when it never had a turn. */
export async function takeCancelSnapshot(c: LoadedChild, backend: Backend): Promise<string | undefined> {
  const turns = c.state.turns;
  const turn = turns.at(-1);
  if (!turn) return undefined;
  const running = !c.state.completions.has(turn.turnId);
  const dir = c.files.dir;
  let pane = "";
  if (c.entry.pane) {
    try {
      pane = await backend.capture(c.entry.pane, { lines: 120 });
    } catch {
      // A pane that cannot be captured leaves the rest of the snapshot worth keeping.
    }
  }
  const session = loadSession(sessionFileOf(dir));
  const conversation = session.messages
    .filter((m) => m.role !== "system")
    .slice(-SNAPSHOT_BOUNDS.messages)
    .map((m) => ({ role: m.role, text: headOf(m.text, SNAPSHOT_BOUNDS.message) }));
  const openTool = running ? openToolOf(c.store.readEvents(), turn.turnId) : undefined;
  return writeCancelSnapshot(dir, {
    v: 1,
    turnId: turn.turnId,
    takenAt: new Date().toISOString(),
    running,
    prompt: headOf(fileTail(promptFile(dir, turn.turnId), 1024 * 1024), SNAPSHOT_BOUNDS.prompt),
    answerTail: fileTail(c.files.output, SNAPSHOT_BOUNDS.answer),
    conversationTail: conversation,
    pane: tailOf(pane.trimEnd(), SNAPSHOT_BOUNDS.pane),
    ...(openTool ? { openTool } : {}),
  });
}

/** The snapshot `cancel --snapshot` kept of a child's last turn, as a view. */
export interface SnapshotView {
  path: string;
  turnId: string;
  takenAt: string;
  /** Whether that turn was still running when it was taken. */
  running: boolean;
  /** The tool call that was running, in one line. */
  openTool?: string;
}

/** The snapshot of the child's last turn, if one was kept: what `status` shows and a resume uses. */
export function lastSnapshot(c: LoadedChild): SnapshotView | undefined {
  const turn = c.state.turns.at(-1);
  const s = turn ? c.store.readCancelSnapshot(turn.turnId) : undefined;
  if (!s) return undefined;
  return {
    path: path.join(c.files.dir, snapshotPath(s.turnId)),
    turnId: s.turnId,
    takenAt: s.takenAt,
    running: s.running,
    ...(s.openTool ? { openTool: `${s.openTool.name} ${s.openTool.summary}`.trim() } : {}),
  };
}
