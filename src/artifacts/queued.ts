import * as fs from "node:fs";
import { listInbox, readInboxItem } from "./inbox.js";
import type { EventAppender } from "./store.js";

/**
 * Closing a child with turns still queued: each gets a completion ("…; the turn never started") and its
 * inbox file is removed, so no waiter is left without a record. `skip` holds turnIds already started or settled.
 * Returns how many turns it settled.
 */
export function completeQueuedTurns(
  inboxDir: string,
  log: EventAppender,
  opts: {
    status: "cancelled" | "lost";
    reason: string;
    by: "child" | "parent";
    skip?: (turnId: string) => boolean;
  },
): number {
  let completed = 0;
  for (const file of listInbox(inboxDir)) {
    const item = readInboxItem(file);
    if (item && !opts.skip?.(item.turnId)) {
      completed += 1;
      log.append({
        type: "completion",
        turnId: item.turnId,
        status: opts.status,
        reason: `${opts.reason}; the turn never started`,
        exitCode: null,
        signal: null,
        by: opts.by,
      });
    }
    fs.rmSync(file, { force: true });
  }
  return completed;
}
