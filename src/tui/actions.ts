import * as fs from "node:fs";
import * as path from "node:path";
import { isMusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import type { ChildView } from "../core/views.js";
import { shortId } from "../util/ids.js";
import { openRegular } from "../util/safe-read.js";
import { visible, visibleLine } from "../util/sanitize.js";
import { shellQuote } from "../util/text.js";
import { elapsed } from "./layout.js";

/** The most of a child's last answer the expanded view reads. */
export const PREVIEW_BYTES = 4096;
/** The most of a pane capture top keeps. */
export const CAPTURE_BYTES = 16 * 1024;

/** A line of a child's expanded details; a path is cut in its middle, keeping the child's id at its end. */
export interface Detail {
  text: string;
  cut?: "middle";
}

/** What the supervisor does to children: every action goes through the core, each answers one line. */
export interface TopActions {
  /** The expanded lines of a child's row, from its view (top's snapshot has it: nothing is loaded again). */
  details(v: ChildView): Detail[];
  capture(id: string, lines: number): Promise<string>;
  send(id: string, text: string): Promise<string>;
  cancel(id: string): Promise<string>;
  /** How many children cancelling this subtree would stop (for the confirmation). */
  subtreeSize(id: string): number;
  cancelTree(id: string): Promise<string>;
  focus(id: string): Promise<string>;
  attach(id: string): string;
}

/** The first `max` bytes of a regular file (never a symlink or FIFO), cut at a character boundary. */
function head(file: string, max: number): { text: string; bytes: number } {
  const { fd, size } = openRegular(file);
  try {
    const buf = Buffer.alloc(Math.min(size, max));
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return { text: new TextDecoder().decode(buf.subarray(0, n)).replace(/\uFFFD$/, ""), bytes: size };
  } finally {
    fs.closeSync(fd);
  }
}

/** A failure as one line (a MusterError's message, else the error's first line). */
export const failure = (e: unknown): string =>
  visibleLine(isMusterError(e) ? e.message : ((e as Error)?.message ?? String(e)).split("\n")[0]!);

/** A child as top's messages call it: as its row does, by its name, else its short id. */
const called = (v: ChildView): string => visibleLine(v.name ?? shortId(v.id));

export function coreActions(m: Muster): TopActions {
  return {
    details(v) {
      const now = Date.now();
      const turns = v.turns
        .slice(-6)
        .map(
          (t) =>
            `${t.n}. ${t.status} ${t.durationMs !== undefined ? `${Math.round(t.durationMs / 100) / 10}s` : elapsed(t.startedAt, now)}`,
        );
      const lines: string[] = [
        `id ${v.id} · runner ${visibleLine(v.runner)} · ${v.turns.length} turn(s): ${turns.join(", ") || "none"}`,
      ];
      const paths: Detail[] = [
        { text: `artifacts ${visibleLine(v.artifactDir)}`, cut: "middle" },
        { text: `session   ${visibleLine(m.paths.sessionFile(v.id))}`, cut: "middle" },
      ];
      const last = v.lastOutcome;
      if (last?.output) {
        try {
          const p = head(path.join(v.artifactDir, last.output.path), PREVIEW_BYTES);
          const more =
            p.bytes > PREVIEW_BYTES ? ` (first ${PREVIEW_BYTES} of ${p.bytes} B)` : ` (${p.bytes} B)`;
          lines.push(
            `last output${more}:`,
            ...visible(p.text)
              .split("\n")
              .filter((l) => l.trim() !== ""),
          );
        } catch (e) {
          lines.push(`last output: ${failure(e)}`);
        }
      } else {
        lines.push(
          last ? `last turn ${last.status}: ${visibleLine(last.reason ?? "no output")}` : "no output yet",
        );
      }
      return [{ text: lines[0]! }, ...paths, ...lines.slice(1).map((text) => ({ text }))];
    },
    async capture(id, lines) {
      const { text } = await m.capture(id, lines);
      const bounded = text.length > CAPTURE_BYTES ? text.slice(-CAPTURE_BYTES) : text;
      return visible(bounded.replace(/\n+$/, ""));
    },
    async send(id, text) {
      const v = await m.view(id);
      // A settled child continues in a resumed turn; a live one queues the follow-up in its inbox.
      const f =
        v.status === "closed" || v.status === "lost" ? await m.resume(id, text) : await m.send(id, text);
      return `sent to ${called(v)}: turn ${shortId(f.turnId)} queued`;
    },
    async cancel(id) {
      const v = await m.view(id);
      const r = await m.cancel(id);
      return `cancelled ${called(v)}: now ${r.status}${r.turnCancelled ? ", its turn cancelled" : ""}`;
    },
    subtreeSize(id) {
      return m.subtree(id).length;
    },
    async cancelTree(id) {
      const rs = await m.cancelTree(id);
      return `cancelled ${rs.length} child(ren) of the subtree of ${called(await m.view(id))}, deepest first`;
    },
    async focus(id) {
      const v = await m.view(id);
      await m.focus(id);
      return `focused ${called(v)}`;
    },
    attach(id) {
      return `attach: ${shellQuote(m.attach(id).command)}`;
    },
  };
}
