/**
 * The closing mark a parent leaves before it stops a child: from then on the host starts no turn. Its second
 * line, when present, says why the child is closed (a workflow's step settled), for the child_exited record.
 */
import * as fs from "node:fs";
import { readFileBounded } from "../util/safe-read.js";

/** What a child's end says when a cancel stopped no turn: it was closed, not cancelled. */
export const CLOSED_BY_CANCEL = "closed by muster cancel";

export function writeClosingMark(file: string, why?: string): void {
  const line = why ? `\n${why.replace(/[\r\n]+/g, " ")}` : "";
  fs.writeFileSync(file, `${new Date().toISOString()}${line}\n`, { mode: 0o600 });
}

/** The reason the mark gives for closing the child, else "closed by muster cancel". */
export function closedDetail(file: string): string {
  try {
    const why = readFileBounded(file, 4096).toString("utf8").split("\n")[1]?.trim();
    return why || CLOSED_BY_CANCEL;
  } catch {
    return CLOSED_BY_CANCEL;
  }
}
