/**
 * The far side of a parent's records for a mirrored child (artifacts/store-mirrored.ts): an
 * `appends/<id>.json` request is written into the log under the child's lock — the lock the host takes for
 * its own settling — only when the log still has the size the parent decided on; otherwise it is dropped
 * and the parent, seeing its records absent, decides again on the newer log. Either way the request is
 * removed once the log's new bytes have gone back.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { EventLog } from "../../artifacts/log.js";
import type { ParentAppend } from "../../artifacts/store-mirrored.js";
import { withFileLock } from "../../util/lock.js";
import { READ_CAPS, readJsonBounded } from "../../util/safe-read.js";
import { EVENTS } from "./paths.js";

export const APPENDS = "appends";

/** The requests waiting in `root`'s appends/ (a relay killed mid-request finds them when it starts). */
export function pendingAppends(root: string): string[] {
  try {
    return fs
      .readdirSync(path.join(root, APPENDS))
      .filter((n) => !n.startsWith(".") && n.endsWith(".json"))
      .sort()
      .map((n) => `${APPENDS}/${n}`);
  } catch {
    return [];
  }
}

/** Writes one request's records if the log is still the one it was decided on; true when they went in. */
export async function applyParentAppend(root: string, rel: string): Promise<boolean> {
  let req: ParentAppend;
  try {
    req = readJsonBounded<ParentAppend>(path.join(root, rel), READ_CAPS.stateJson);
  } catch {
    return false;
  }
  if (req?.v !== 1 || !Number.isSafeInteger(req.after) || !Array.isArray(req.events)) return false;
  if (!req.events.every((e) => e !== null && typeof e === "object" && typeof e.type === "string"))
    return false;
  const events = path.join(root, EVENTS);
  return withFileLock(events, () => {
    if ((fs.statSync(events, { throwIfNoEntry: false })?.size ?? -1) !== req.after) return false;
    const log = EventLog.open(events);
    try {
      for (const e of req.events) log.append(e);
    } finally {
      log.close();
    }
    return true;
  });
}
