/** What a human sees of an isolated child's result (on stderr, so stdout stays the answer). */
import type { TurnResult } from "../core/results.js";
import { shortId } from "../util/ids.js";
import { withSelf } from "./output.js";
import { visibleLine } from "./sanitize.js";

export function isolationNote(r: TurnResult): string {
  const i = r.isolation;
  if (!i) return "";
  const id = shortId(r.id);
  const work =
    i.range !== undefined
      ? ` (${i.range}, ${i.commits} commit${i.commits === 1 ? "" : "s"}${i.uncommitted ? ", uncommitted work" : ""})`
      : "";
  let out = withSelf(`muster: ${id} works on ${i.branch}${work}: muster diff ${id} · muster merge ${id}\n`);
  if (i.parentWrites && i.parentWrites.length > 0)
    out += `muster: warning: ${id} changed the parent's checkout during its turn: ${i.parentWrites.map(visibleLine).join(", ")}\n`;
  if (i.problem) out += `muster: warning: ${id}: ${visibleLine(i.problem)}\n`;
  return out;
}
