/** Cancelling children: many at once, queued turns dropped before any signal, panes closed afterwards. */
import * as path from "node:path";
import { type LoadedChild, resolveChildId } from "./children.js";
import type { CoreContext } from "./context.js";
import { settleFromParent } from "./liveness.js";
import type { RegistryDoc } from "./registry.js";
import { takeCancelSnapshot } from "./snapshot.js";

export interface CancelOptions {
  /** How long a host gets to settle after SIGTERM before it is killed (default 5 s). */
  graceMs?: number;
  /** Keep each cancelled child's pane (dead, for reading) instead of closing it. */
  keepPane?: boolean;
  /** Before stopping each live child, keep its bounded last context (snapshots/<turnId>.json). */
  snapshot?: boolean;
  /** Why an idle child is closed, for its end record (default "closed by muster cancel"). */
  closeReason?: string;
}

export interface CancelResult {
  id: string;
  /** The child's status afterwards. */
  status: string;
  /** Its state afterwards, the word `ls` shows: `cancelled` when a turn was stopped, else `closed` (or `lost`…). */
  state: string;
  /** Who recorded it: the child host, a parent (host unresponsive or never started), or nobody (already over). */
  by: "child" | "parent" | "none";
  /** Whether a turn was running or queued (and so settled `cancelled`). */
  turnCancelled: boolean;
  /** The child's pane afterwards: closed, kept (see paneKept), or none (it had none). */
  pane: "closed" | "kept" | "none";
  /** Why the pane was kept: asked for (--keep-pane), or its backend (tmux) would not close it. */
  paneKept?: string;
  /** The snapshot kept before it was stopped (with CancelOptions.snapshot), or why none could be. */
  snapshot?: string;
  snapshotError?: string;
}

// Children cancelled at once: each is a signal, a few small reads every 20 ms and one tmux call.
const CONCURRENCY = 16;
const POLL_MS = 20;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A child and all its descendants (or, with no root, every child), by the registry's parent links. */
export function treeMembers(doc: RegistryDoc, root?: string): string[] {
  const all = Object.values(doc.children);
  const members = new Set<string>(root ? [root] : all.map((e) => e.id));
  for (let grew = true; grew; ) {
    grew = false;
    for (const e of all) {
      if (e.parent && members.has(e.parent) && !members.has(e.id)) {
        members.add(e.id);
        grew = true;
      }
    }
  }
  return [...members];
}

/** A child (id, unique prefix or suffix, or name) and all its descendants; with none, every child. */
export function subtreeOf(doc: RegistryDoc, idOrPrefix?: string): string[] {
  return treeMembers(doc, idOrPrefix === undefined ? undefined : resolveChildId(doc, idOrPrefix).id);
}

function depthOf(doc: RegistryDoc, id: string): number {
  let d = 0;
  for (let p = doc.children[id]?.parent; p && d < 64; p = doc.children[p]?.parent) d += 1;
  return d;
}

async function eachBounded<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Cancels the given children (full ids). First every live one is marked `closing`, before any signal:
 * from then on its host starts no turn, so a slot freed by a cancelled turn cannot start a queued one
 * only for it to be killed. Then the deepest level of the tree first, each level in parallel (bounded).
 * Results come deepest first.
 */
export async function cancelChildren(
  m: CoreContext,
  ids: string[],
  opts: CancelOptions = {},
): Promise<CancelResult[]> {
  const doc = m.registry.read();
  const children = ids.flatMap((id) => {
    const entry = doc.children[id];
    return entry ? [m.reload(entry)] : [];
  });
  const live = children.filter((c) => c.status !== "closed" && c.status !== "lost");
  // Each live child is stopped through its backend: one not loaded here refuses the cancel before any mark.
  for (const c of live) m.backendOf(c.entry);
  for (const c of live) {
    try {
      c.store.markClosing(opts.closeReason);
    } catch {
      // No artifact dir to mark (removed under us): the signal below still stops the host.
    }
  }
  const levels = new Map<number, LoadedChild[]>();
  for (const c of children) {
    const d = depthOf(doc, c.entry.id);
    levels.set(d, [...(levels.get(d) ?? []), c]);
  }
  const out: CancelResult[] = [];
  for (const d of [...levels.keys()].sort((a, b) => b - a)) {
    const level = levels.get(d)!.sort((a, b) => b.entry.id.localeCompare(a.entry.id));
    const done = new Map<string, CancelResult>();
    await eachBounded(level, CONCURRENCY, async (c) => {
      done.set(c.entry.id, await cancelOne(m, c, opts));
    });
    for (const c of level) out.push(done.get(c.entry.id)!);
  }
  return out;
}

/** Stops one child (already marked closing) and closes its pane unless asked to keep it. */
async function cancelOne(m: CoreContext, c: LoadedChild, opts: CancelOptions): Promise<CancelResult> {
  const kept = opts.snapshot ? await snapshotBefore(m, c) : {};
  const { paneClosed, ...stopped } = await stopChild(m, c, opts.graceMs ?? 5000);
  const settled = { ...stopped, state: m.reload(c.entry).live.state, ...kept };
  const pane = c.entry.pane;
  // With its pane gone, a place made for this child alone (its container) rests until a resume.
  const rest = () =>
    m
      .backendOf(c.entry)
      .place.rest?.(c.files.dir)
      .catch(() => undefined);
  if (!pane) return { ...settled, pane: "none" };
  if (paneClosed) {
    await rest();
    return { ...settled, pane: "closed" };
  }
  if (opts.keepPane) return { ...settled, pane: "kept", paneKept: "asked to keep it" };
  try {
    // Only now: the host has recorded its end (or is proven gone), so closing the pane cannot cut it short.
    await m.backendOf(c.entry).kill(pane);
    await rest();
    return { ...settled, pane: "closed" };
  } catch (e) {
    const by = pane.backend;
    return { ...settled, pane: "kept", paneKept: `${by} would not close it: ${(e as Error).message}` };
  }
}

/** The child's last context, kept before the stop (best effort: a failure is reported, the cancel goes on). */
async function snapshotBefore(
  m: CoreContext,
  c: LoadedChild,
): Promise<{ snapshot?: string; snapshotError?: string }> {
  const now = m.reload(c.entry);
  if (now.status === "closed" || now.status === "lost" || now.status === "unreadable") return {};
  try {
    const rel = await takeCancelSnapshot(now, m.backendOf(c.entry));
    return rel ? { snapshot: path.join(now.files.dir, rel) } : {};
  } catch (e) {
    return { snapshotError: (e as Error).message };
  }
}

type Stopped = Omit<CancelResult, "pane" | "state"> & { paneClosed?: boolean };

async function stopChild(m: CoreContext, loaded: LoadedChild, graceMs: number): Promise<Stopped> {
  const id = loaded.entry.id;
  // Fresh state: a host may have started (or ended) since the children were first read.
  const c = m.reload(loaded.entry);
  if (c.status === "closed" || c.status === "lost")
    return { id, status: c.status, by: "none", turnCancelled: false };
  const turnCancelled = c.status === "running" || c.status === "starting" || c.status === "queued";
  const settledByChild = async (ms: number): Promise<Stopped | undefined> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const now = m.reload(c.entry);
      if (now.state.exited) return { id, status: now.status, by: "child", turnCancelled };
      if (Date.now() >= deadline) return undefined;
      await sleep(POLL_MS);
    }
  };
  // Signals go through the child's backend: its host may not be a process of this machine.
  const backend = m.backendOf(c.entry);
  const pid = c.state.hostPid;
  const host = pid === undefined ? undefined : { pid, dir: c.files.dir, pane: c.entry.pane };
  if (host && (await backend.host.alive(host)) !== "dead") {
    // false: it exited just now (on its own, having seen the closing mark): its events say how.
    await backend.host.signal(host, "SIGTERM");
    const done = await settledByChild(graceMs);
    if (done) return done;
    // The host did not settle in time: kill it, and settle from here once it is really gone.
    await backend.host.signal(host, "SIGKILL");
    for (let i = 0; i < 100 && (await backend.host.alive(host)) !== "dead"; i++) await sleep(POLL_MS);
  } else if (pid === undefined && c.entry.pane) {
    // No host yet. One that starts now sees the closing mark and settles itself; otherwise closing the
    // pane stops it (SIGHUP), and it gets a moment to record that itself.
    const early = await settledByChild(1000);
    if (early) return early;
    await backend.kill(c.entry.pane).catch(() => {});
    return { ...((await settledByChild(500)) ?? (await settleHere())), paneClosed: true };
  }
  return settleHere();

  // The host is gone without recording its end: record it from here (unless it just did after all).
  async function settleHere(): Promise<Stopped> {
    if (
      await settleFromParent(
        c.files.dir,
        "cancelled",
        "cancelled by muster cancel",
        backend.host,
        c.entry.pane,
      )
    )
      return { id, status: "closed", by: "parent", turnCancelled };
    return { id, status: m.reload(c.entry).status, by: "child", turnCancelled };
  }
}
