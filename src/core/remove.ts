import * as fs from "node:fs";
import { MusterError } from "../base/errors.js";
import { fetchFarWork } from "../isolation/far.js";
import { type BranchFate, discardIsolation } from "../isolation/result.js";
import { readIsolation } from "../isolation/worktree.js";
import type { Place } from "../place/place.js";
import { sessionFileOf } from "../sessions/store.js";
import type { LoadedChild } from "./children.js";
import { resolveChildId } from "./children.js";
import type { CoreContext } from "./context.js";

export interface RemoveOptions {
  /** Cancel a running (or queued) turn first instead of refusing. */
  force?: boolean;
}

export interface RemovedChild {
  id: string;
  agent: string;
  name?: string;
  /** The status it had before removal (an idle or running child is closed first). */
  status: string;
  /** Whether a running turn was cancelled to remove it (only with force). */
  cancelledTurn: boolean;
  /** A child isolated in a worktree: its branch, and whether it was kept (not merged yet). */
  branch?: BranchFate;
}

const busy = (c: LoadedChild): boolean =>
  c.status === "running" || c.status === "starting" || c.status === "queued";

/**
 * Removes children in one step: closes an idle host, kills the pane, deletes the artifact dir, the
 * conversation file and the registry entry. Every id is resolved and checked before anything is
 * touched, so an unknown id or a running child (without force) removes nothing. `drop`: spawns undone (see
 * discardChildFiles), whose branches go whatever they hold.
 */
export async function removeChildren(
  m: CoreContext,
  ids: string[],
  opts: RemoveOptions = {},
  work: "keep" | "drop" = "keep",
): Promise<RemovedChild[]> {
  if (ids.length === 0) throw new MusterError("invalid_argument", "give at least one child id");
  const doc = m.registry.read();
  const wanted = [...new Set(ids.map((id) => resolveChildId(doc, id).id))];
  const children = [];
  for (const id of wanted) children.push(await m.reconcile(m.child(id)));
  const running = children.filter(busy);
  if (running.length > 0 && !opts.force) {
    const list = running.map((c) => c.entry.id.slice(-8)).join(" ");
    throw new MusterError("busy", `child ${list} has a turn ${running[0]!.status}; nothing was removed`, {
      next: { action: "wait_or_remove", ids: running.map((c) => c.entry.id) },
    });
  }
  // Panes are closed through each child's backend: one not loaded here refuses before anything is removed.
  for (const c of children)
    if (c.entry.pane || (c.status !== "closed" && c.status !== "lost")) m.backendOf(c.entry);
  const out: RemovedChild[] = [];
  for (const c of children) {
    const id = c.entry.id;
    // Closing the host first: a removed artifact dir must not be written to by a host still alive.
    if (c.status !== "closed" && c.status !== "lost") await m.cancel(id);
    if (c.entry.pane)
      await m
        .backendOf(c.entry)
        .kill(c.entry.pane)
        .catch(() => {});
    await m.registry.update((d) => {
      delete d.children[id];
    });
    const branch = await discardChildFiles(m, c.files.dir, id, () => m.backendOf(c.entry).place, work);
    out.push({
      id,
      agent: c.entry.agent,
      ...(c.entry.name !== undefined ? { name: c.entry.name } : {}),
      status: c.status,
      cancelledTurn: busy(c),
      ...(branch ? { branch } : {}),
    });
  }
  // The last child gone: what a backend held open only for children closes too (best effort).
  const backends = new Set(children.filter((c) => c.entry.pane).map((c) => m.backendOf(c.entry)));
  for (const b of backends) await b.tidy?.().catch(() => {});
  return out;
}

/**
 * Removes what a child left on disk, once it is out of the registry: its worktree (and its branch once
 * merged; uncommitted work is committed onto it first), its artifact dir, its conversation, and what its
 * place keeps there for it. Returns the branch's fate. `drop`: a spawn undone, whose child never worked —
 * what its worktree holds is its set-up's, and the branch goes whatever it holds.
 */
export async function discardChildFiles(
  m: CoreContext,
  dir: string,
  id: string,
  place: () => Place,
  work: "keep" | "drop" = "keep",
): Promise<BranchFate | null> {
  // A worktree on another machine: its work comes to its branch here first; if it cannot, its files there stay.
  const far = readIsolation(dir);
  let reached = true;
  if (far?.place && work === "keep")
    await Promise.resolve()
      .then(() => fetchFarWork(place(), far, "commit"))
      .catch(() => {
        reached = false;
      });
  const branch = discardIsolation(dir, id, work);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(sessionFileOf(dir), { force: true });
  // Best effort: a place that is not reachable (or not loaded here) keeps its copy.
  if (reached)
    await Promise.resolve()
      .then(() => place().forget?.(dir, m.env))
      .catch(() => {});
  return branch;
}
