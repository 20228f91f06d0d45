/**
 * Resume: continues a settled child owned by this primary, in its pane, or — when the pane's host is gone —
 * in a new pane of its own backend, from its stored conversation.
 */
import * as path from "node:path";
import { isMusterError, MusterError } from "../base/errors.js";
import { type Placement, paneLabel, placementWarning } from "../mux/backend.js";
import { isResumableFile, sessionFileOf } from "../sessions/store.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { continueHint } from "./hints.js";
import { checkPrompt } from "./host-launch.js";
import { settleQueuedFromParent } from "./liveness.js";
import { relaunchHost } from "./relaunch.js";
import { type FollowUp, findOwner, queueTurn, type TurnSettings } from "./send.js";
import { lastSnapshot } from "./snapshot.js";

export async function resumeChild(
  m: CoreContext,
  idOrPrefix: string,
  prompt: string,
  opts: TurnSettings & { placement?: Placement } = {},
): Promise<FollowUp> {
  checkPrompt(prompt);
  const c = childForResume(m, idOrPrefix);
  if (c.status === "running" || c.status === "starting" || c.status === "queued") {
    throw new MusterError(
      "busy",
      `child ${c.entry.id} already has an active turn; wait for it or cancel it first`,
      { next: { action: "wait", ids: [c.entry.id] } },
    );
  }
  // A turn cancelled mid-way with --snapshot is resumable from its snapshot, even before any turn completed.
  const kept = lastSnapshot(c);
  const snapshot = kept?.running ? kept : undefined;
  if (!isResumableFile(sessionFileOf(c.files.dir)) && !snapshot) {
    throw new MusterError(
      "not_resumable",
      `child ${c.entry.id} is not resumable: no turn of it has completed with a result`,
      { next: continueHint(c, m.cwd) },
    );
  }
  const context = snapshot ? { context: path.relative(c.files.dir, snapshot.path) } : {};
  if (c.status === "idle") return queueTurn(c, prompt, { ...opts, ...context }, m.env);
  // The cancel that closed it is over: the new host may start turns again.
  c.store.clearClosing();
  const follow = queueTurn(c, prompt, { ...opts, ...context }, m.env);
  const pane = await relaunchHost(m, c, {
    ...(opts.placement ? { placement: opts.placement } : {}),
    whyNot: `the resumed child ${c.entry.id} did not start in its new pane`,
    // The turn queued for it will not run: it is settled, so no waiter waits for it forever.
    onNoStart: () => settleQueuedFromParent(c.files.dir, "the resumed child host did not start"),
  });
  return {
    ...follow,
    queued: false,
    newPane: paneLabel(pane),
    warnings: [...follow.warnings, ...placementWarning(m.backendOf(c.entry), opts.placement)],
  };
}

/** Like child(), but says so when the id belongs to another primary (only the owner may resume). */
function childForResume(m: CoreContext, idOrPrefix: string): LoadedChild {
  try {
    return m.child(idOrPrefix);
  } catch (e) {
    const owner = isMusterError(e) && e.code === "not_found" ? findOwner(m.root, idOrPrefix) : undefined;
    if (owner && owner !== m.primary) {
      throw new MusterError(
        "other_primary",
        `child ${idOrPrefix} belongs to another primary (${owner}); only its owner can resume it`,
        { cause: e },
      );
    }
    throw e;
  }
}
