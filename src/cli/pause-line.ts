import type { TreePauseView } from "../core/tree-pause.js";
import { shortId } from "../util/ids.js";
import { visibleLine } from "./sanitize.js";

/** A paused tree in one line, with the command that lifts it. */
export const treePausedLine = (p: TreePauseView): string =>
  `the tree is paused (${p.kind}, by ${shortId(p.child)}): ${visibleLine(p.reason)}${p.resetAt ? `; until ${p.resetAt}` : ""}; no new turn starts until muster resume-tree`;
