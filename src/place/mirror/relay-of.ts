/**
 * The far side of one child's mirror, as both relay entry points start it: `dir` must sit in a folder that
 * is there (a child's first link makes the dir itself from the hello's seed); with `session`, the child's
 * conversation next to it (<primary>/subagents/<child>.jsonl) is carried too.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { sessionFileOf } from "../../sessions/store.js";
import { type MirrorLink, MirrorRelay } from "./relay.js";

/** The relay of `dir` over `link`, or why there cannot be one (one line). */
export function relayOf(dir: string, session: boolean, link: MirrorLink): MirrorRelay | string {
  const root = path.resolve(dir);
  if (!fs.lstatSync(path.dirname(root), { throwIfNoEntry: false })?.isDirectory())
    return `mirror relay: ${path.dirname(root)} is not a folder`;
  return new MirrorRelay(root, link, session ? { sessionFile: sessionFileOf(root) } : {});
}
