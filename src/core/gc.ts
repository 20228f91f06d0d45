import { pruneGroups } from "../delivery/groups.js";
import type { BranchFate } from "../isolation/result.js";
import type { Backend } from "../mux/backend.js";
import { pruneBestOf } from "./best-of-record.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { discardChildFiles } from "./remove.js";

export interface GcOptions {
  /** Only children whose last activity is older than this. */
  olderThanMs: number;
  dryRun?: boolean;
  /** Also close and remove idle children (their hosts are alive, their turns settled). */
  idle?: boolean;
}

export interface GcReport {
  removed: {
    id: string;
    agent: string;
    name?: string;
    status: string;
    lastActivity: string;
    branch?: BranchFate;
  }[];
  /** Children kept, each with why; `recent`: active within --older-than (the rest cannot be removed as they are). */
  skipped: { id: string; why: string; recent?: true }[];
  /** Completion groups removed because every child in them is gone. */
  groupsRemoved: number;
  /** Best-of records removed because every child of the run (candidates and judge) is gone. */
  bestOfRemoved: number;
  dryRun: boolean;
  /** The age a child's last activity must pass to be removed. */
  olderThanMs: number;
}

const lastActive = (c: LoadedChild): string => c.state.lastActivity?.ts ?? c.entry.createdAt;

/** Removes settled children past their age: pane, artifact dir, conversation, registry entry. Never a running one. */
export async function collectGarbage(m: CoreContext, opts: GcOptions): Promise<GcReport> {
  const report: GcReport = {
    removed: [],
    skipped: [],
    groupsRemoved: 0,
    bestOfRemoved: 0,
    dryRun: !!opts.dryRun,
    olderThanMs: opts.olderThanMs,
  };
  const tidied = new Set<Backend>();
  const cutoff = Date.now() - opts.olderThanMs;
  for (const c of await m.list()) {
    const id = c.entry.id;
    // Its age and state are unknown: removing it could lose a running child. The user looks at it.
    if (c.unreadable !== undefined) {
      report.skipped.push({ id, why: `unreadable: ${c.unreadable}` });
      continue;
    }
    if (Date.parse(lastActive(c)) > cutoff) {
      report.skipped.push({ id, why: `active since the cutoff (last at ${lastActive(c)})`, recent: true });
      continue;
    }
    if (c.status === "running" || c.status === "starting" || c.status === "queued") {
      report.skipped.push({ id, why: "a turn is running" });
      continue;
    }
    if (c.status === "idle" && !opts.idle) {
      report.skipped.push({ id, why: "idle (its host is alive); add --idle to close and remove it" });
      continue;
    }
    const panes = [...(c.entry.panes ?? []), ...(c.entry.pane ? [c.entry.pane] : [])];
    const missing = panes.map((p) => p.backend).find((b) => !m.backends.has(b));
    if (missing) {
      report.skipped.push({ id, why: `its backend "${missing}" is not loaded here (MUSTER_BACKEND_MODULE)` });
      continue;
    }
    report.removed.push({
      id,
      agent: c.entry.agent,
      ...(c.entry.name !== undefined ? { name: c.entry.name } : {}),
      status: c.status,
      lastActivity: lastActive(c),
    });
    if (opts.dryRun) continue;
    if (c.status === "idle") await m.cancel(id);
    // Every pane it ever had: a child resumed into a new pane leaves its old (dead) one behind.
    for (const pane of panes)
      await m.backends
        .of(pane)
        .kill(pane)
        .catch(() => {});
    await m.registry.update((doc) => {
      delete doc.children[id];
    });
    const branch = await discardChildFiles(m, c.files.dir, id, () => m.backendOf(c.entry).place);
    if (branch) report.removed[report.removed.length - 1]!.branch = branch;
    for (const pane of panes) tidied.add(m.backends.of(pane));
  }
  if (!opts.dryRun) {
    const children = m.registry.read().children;
    report.groupsRemoved = await pruneGroups(m.paths.groups, (id) => id in children);
    report.bestOfRemoved = await pruneBestOf(m.paths.bestOf, (id) => id in children);
  }
  // The last child gone: what a backend held open only for children closes too (best effort).
  for (const b of tidied) await b.tidy?.().catch(() => {});
  return report;
}
