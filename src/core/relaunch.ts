/**
 * A new host for a child whose host has exited or died, in a new pane of its own backend: the one launcher of
 * `spawn --resume` and of a restart. The host starts with `--resume` and takes what waits in the inbox.
 */
import * as fs from "node:fs";
import { MusterError } from "../base/errors.js";
import type { PaneRef, Placement } from "../mux/backend.js";
import { paneLabel } from "../mux/backend.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { handOverForResume } from "./host-launch.js";
import { paneNaming } from "./names.js";

// The new host writes child_started within this long, or its pane is closed and the start counts as failed.
export const RELAUNCH_START_MS = 15_000;

/**
 * Starts the new host and returns its pane once that host runs (its child_started is in the log), so every
 * later reader sees a live child, not the old host's end. A host that does not start has its pane closed and
 * throws `mux_unavailable` (after `onNoStart`, where the caller settles what the host was to run).
 */
export async function relaunchHost(
  m: CoreContext,
  c: LoadedChild,
  opts: { placement?: Placement; whyNot?: string; onNoStart?: () => Promise<void> } = {},
): Promise<PaneRef> {
  const { placement } = opts;
  // A child starts again where it ran: its own backend, whatever the default is now.
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
      ...(placement ? { placement } : {}),
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
  const deadline = Date.now() + RELAUNCH_START_MS;
  for (;;) {
    const now = m.reload(c.entry);
    if (!now.state.exited && now.state.hostPid !== c.state.hostPid) return pane;
    if (Date.now() > deadline || (await backend.alive(pane)) === "dead") {
      await backend.kill(pane).catch(() => {});
      fs.rmSync(c.files.envFile, { force: true });
      await opts.onNoStart?.();
      throw new MusterError(
        "mux_unavailable",
        opts.whyNot ?? `the new host of child ${c.entry.id} did not start in its new pane`,
      );
    }
    await new Promise((r) => setTimeout(r, 15));
  }
}
