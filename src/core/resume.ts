/**
 * Resume: continues a settled child owned by this primary, in its pane, or — when the pane's host is gone —
 * in a new pane of its own backend, from its stored conversation.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { isMusterError, MusterError } from "../base/errors.js";
import { type Placement, paneLabel, placementWarning } from "../mux/backend.js";
import { isResumable, loadSession, sessionFileOf } from "../sessions/store.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { continueHint } from "./hints.js";
import { checkPrompt, handOverForResume } from "./host-launch.js";
import { settleQueuedFromParent } from "./liveness.js";
import { paneNaming } from "./names.js";
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
  const session = loadSession(sessionFileOf(c.files.dir));
  // A turn cancelled mid-way with --snapshot is resumable from its snapshot, even before any turn completed.
  const kept = lastSnapshot(c);
  const snapshot = kept?.running ? kept : undefined;
  if (!isResumable(session) && !snapshot) {
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
  // A resumed child starts again where it ran: its own backend, whatever the default is now.
  const backend = m.backendOf(c.entry);
  handOverForResume(c.files.envFile, c.meta, m.env, m.cwd, backend.place);
  await backend.place.carry?.(c.files.dir, m.env).catch((e: unknown) => {
    fs.rmSync(c.files.envFile, { force: true });
    throw e;
  });
  const pane = await backend
    .spawn({
      argv: backend.place.hostArgv(c.files.dir, ["--resume"]),
      start: "immediate",
      cwd: c.entry.cwd,
      ...paneNaming(c.entry),
      ...(opts.placement ? { placement: opts.placement } : {}),
    })
    .catch((e: unknown) => {
      fs.rmSync(c.files.envFile, { force: true });
      throw e;
    });
  await m.registry.update((doc) => {
    const e = doc.children[c.entry.id];
    if (!e) return;
    // Every pane the child ever had is remembered: gc closes the old ones too.
    if (e.pane && paneLabel(e.pane) !== paneLabel(pane)) e.panes = [...(e.panes ?? []), e.pane];
    e.pane = pane;
  });
  // Return once the new host runs, so every later reader sees a live child, not the old exit.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const now = m.reload(c.entry);
    if (!now.state.exited && now.state.hostPid !== c.state.hostPid) break;
    if (Date.now() > deadline || (await backend.alive(pane)) === "dead") {
      await backend.kill(pane).catch(() => {});
      fs.rmSync(c.files.envFile, { force: true });
      await settleQueuedFromParent(c.files.dir, "the resumed child host did not start");
      throw new MusterError(
        "mux_unavailable",
        `the resumed child ${c.entry.id} did not start in its new pane`,
      );
    }
    await new Promise((r) => setTimeout(r, 15));
  }
  return {
    ...follow,
    queued: false,
    newPane: paneLabel(pane),
    warnings: [...follow.warnings, ...placementWarning(backend, opts.placement)],
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
