/**
 * The notice of a child a parent recorded lost (its host died): sent by the parent whose record it is. That
 * record is appended under the child's lock by the first parent that finds the child not yet exited, so
 * parents that notice the same death at once send one notice between them. It goes from a process of its
 * own: the parent may be a command that ends at once, and a slow target must not hold it up.
 */
import * as path from "node:path";
import type { MusterEvent } from "../artifacts/events.js";
import { pathsOfArtifactDir } from "../artifacts/layout.js";
import { sendDetached } from "../notify/detached.js";
import { noticeOf } from "../notify/notice.js";
import { storeAt } from "./stores.js";

/** Tells the person's notification targets of `recorded`, the child_exited this process recorded, if lost. */
export function tellLost(env: NodeJS.ProcessEnv, dir: string, recorded: MusterEvent | undefined): void {
  if (recorded?.type !== "child_exited" || recorded.reason !== "lost") return;
  const agent = storeAt(dir).readMeta()?.agent ?? "unknown";
  const notice = noticeOf(recorded, { child: path.basename(dir), agent });
  if (notice) sendDetached(notice, env, pathsOfArtifactDir(dir).primary.notifyLog);
}
