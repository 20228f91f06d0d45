import type { ChildMeta } from "../artifacts/events.js";
import type { ChildFiles, PrimaryPaths } from "../artifacts/layout.js";
import type { ChildStore, LinkDown } from "../artifacts/store.js";
import { isMusterError, MusterError } from "../base/errors.js";
import { assertIdOrPrefix, shortId } from "../util/ids.js";
import { DEFAULT_STALL_MS, deriveLive, type LiveState } from "./live-state.js";
import { childNamed, isChildName } from "./names.js";
import type { RegistryDoc, RegistryEntry } from "./registry.js";
import {
  type ChildState,
  type ChildStatus,
  childStatus,
  emptyState,
  lastCompletion,
  openTurn,
} from "./state.js";
import { foldLog, type MalformedReport } from "./state-checkpoint.js";
import { storeAt } from "./stores.js";

/** Everything known about one child right now. */
export interface LoadedChild {
  entry: RegistryEntry;
  /** Its files, read and written through here (the artifact dir, or its local mirror). */
  store: ChildStore;
  files: ChildFiles;
  meta: ChildMeta | undefined;
  state: ChildState;
  /** turnIds waiting in the inbox, oldest first. */
  pending: string[];
  status: ChildStatus;
  /** What the child is doing now, derived from its events (see live-state.ts). */
  live: LiveState;
  /** The label given at spawn (`--name`), if any. */
  name?: string;
  /** Spans of events.ndjson that are not records (junk, torn or oversized lines): skipped, and reported here. */
  malformed: MalformedReport;
  /** Why its files could not be read (status "unreadable"; state, meta and pending are then empty). */
  unreadable?: string;
}

export type { MalformedReport };

/** How a listing reads: `probe` false reads files only; `reuse` holds children loaded before, taken as they are. */
export interface ListOptions {
  probe?: boolean;
  /**
   * Children already loaded (by id), kept as they are when their registry entry reads the same: a view kept
   * current from events (LiveViews) reads again only the children whose status moved, not the whole tree.
   */
  reuse?: ReadonlyMap<string, LoadedChild>;
}

export const MAX_MALFORMED_SPANS = 20;

/** How live states are judged: the stall limit (ms) and the clock. */
export interface LiveOptions {
  stallMs?: number;
  now?: number;
}

/** A child's live state from its folded events, its queue and (when known) its registry entry. */
export function liveOf(
  s: ChildState,
  pending: number,
  opts: LiveOptions & { createdAt?: string; unreadable?: string } = {},
): LiveState {
  const open = openTurn(s);
  const last = lastCompletion(s);
  return deriveLive(
    {
      fold: s.live,
      hostStarted: s.hostPid !== undefined,
      ...(s.startedAt ? { startedAt: s.startedAt } : {}),
      ...(open ? { open: { turnId: open.turnId, startedAt: open.startedAt } } : {}),
      ...(s.exited
        ? {
            exited: {
              ts: s.exited.ts,
              reason: s.exited.reason,
              ...(s.exited.detail ? { detail: s.exited.detail } : {}),
            },
          }
        : {}),
      ...(last
        ? {
            last: {
              turnId: last.turnId,
              ts: last.ts,
              status: last.status,
              ...(last.reason ? { reason: last.reason } : {}),
            },
          }
        : {}),
      pending,
      ...(opts.unreadable !== undefined ? { unreadable: opts.unreadable } : {}),
      ...(opts.createdAt ? { createdAt: opts.createdAt } : {}),
    },
    opts.now ?? Date.now(),
    opts.stallMs ?? DEFAULT_STALL_MS,
  );
}

/** A child not yet exited whose place does not answer: `unreachable`, saying since when and why. */
export function unreachableLive(
  s: ChildState,
  down: LinkDown | undefined,
  place: string | undefined,
): LiveState | undefined {
  if (!down || s.exited) return undefined;
  return {
    state: "unreachable",
    since: down.since,
    detail: `${place ?? "its place"} does not answer: ${down.why}`,
  };
}

/**
 * Reads a child's inbox (first) and events (second): a turn taken in between shows up in the events.
 * A symlink, FIFO or device in place of meta.json or events.ndjson is refused (MusterError "integrity").
 */
export function loadChild(paths: PrimaryPaths, entry: RegistryEntry, live: LiveOptions = {}): LoadedChild {
  const store = storeAt(paths.artifactDir(entry.id));
  const files = store.files;
  const pending = store.queuedTurns();
  // Spawn creates it before the child is registered: gone, the child's history is gone, not "not started yet".
  if (!store.hasEvents())
    throw new MusterError(
      "integrity",
      `${files.events} is missing: child ${entry.id}'s events are gone (deleted while it ran?); its host and pane are left as they are`,
    );
  const { state, malformed } = foldLog(files.dir, files.events, store.eventReader, (report, m) => {
    report.count += 1;
    if (report.spans.length < MAX_MALFORMED_SPANS) report.spans.push(m);
  });
  const stillPending = pending.filter(
    (t) => !state.turns.some((x) => x.turnId === t) && !state.completions.has(t),
  );
  return {
    entry,
    store,
    files,
    meta: store.readMeta(),
    state,
    pending: stillPending,
    status: childStatus(state, stillPending.length),
    live:
      unreachableLive(state, store.linkDown?.(), entry.place) ??
      liveOf(state, stillPending.length, { ...live, createdAt: entry.createdAt }),
    ...(entry.name !== undefined ? { name: entry.name } : {}),
    malformed,
  };
}

/**
 * loadChild for listings: a child whose files are refused (a symlink, FIFO or device in place of meta.json
 * or events.ndjson) or cannot be read comes back with status "unreadable" and the one-line reason, so one
 * broken child does not hide every other one. Commands about that one child still use loadChild and fail.
 */
export function loadChildOrUnreadable(
  paths: PrimaryPaths,
  entry: RegistryEntry,
  live: LiveOptions = {},
): LoadedChild {
  try {
    return loadChild(paths, entry, live);
  } catch (e) {
    const fsError = typeof (e as NodeJS.ErrnoException).syscall === "string";
    if (!(isMusterError(e) && e.code === "integrity") && !fsError) throw e;
    const reason = (e as Error).message.split("\n")[0]!;
    const store = storeAt(paths.artifactDir(entry.id));
    return {
      entry,
      store,
      files: store.files,
      meta: undefined,
      state: emptyState(),
      pending: [],
      status: "unreadable",
      live: liveOf(emptyState(), 0, { ...live, createdAt: entry.createdAt, unreadable: reason }),
      ...(entry.name !== undefined ? { name: entry.name } : {}),
      malformed: { count: 0, spans: [] },
      unreadable: reason,
    };
  }
}

/**
 * Resolves a full id, or a unique prefix or suffix (the short id), among the primary's children.
 * `ownerElsewhere` names another primary that has the child, so "unknown" can say how to reach it;
 * `origin` says where this primary came from (which directory's record), for that message.
 */
export function resolveChildId(
  doc: RegistryDoc,
  idOrPrefix: string,
  ownerElsewhere?: (want: string) => string | undefined,
  origin?: string,
): RegistryEntry {
  // A name is matched first and exactly; names never look like ids (see names.ts), so neither shadows the other.
  if (isChildName(idOrPrefix)) {
    const named = childNamed(doc, idOrPrefix);
    if (named) return named;
    throw new MusterError("not_found", `no child of this primary is named "${idOrPrefix}"`, {
      next: { action: "list" },
    });
  }
  const want = assertIdOrPrefix(idOrPrefix);
  const exact = doc.children[want];
  if (exact) return exact;
  const matches = Object.values(doc.children).filter((c) => c.id.startsWith(want) || c.id.endsWith(want));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new MusterError(
      "invalid_argument",
      `child id "${want}" is ambiguous: ${matches.map((m) => m.id).join(", ")}`,
    );
  }
  const owner = ownerElsewhere?.(want);
  if (owner) {
    throw new MusterError(
      "other_primary",
      `child "${idOrPrefix}" belongs to another primary (${shortId(owner)}), not this one (${shortId(doc.primary)}${origin ? `, ${origin}` : ""})`,
      { next: { action: "reach", primary: owner, ref: idOrPrefix } },
    );
  }
  throw new MusterError("not_found", `unknown child id "${idOrPrefix}"`, { next: { action: "list" } });
}

/**
 * The turn a waiter should wait for: the newest one requested, whether still queued, started, or
 * settled without starting. By arrival, never by the id's timestamp (the sender's clock): the last one
 * in the inbox, else the one whose turn_started or (never started) completion was recorded last.
 */
export function targetTurn(c: LoadedChild): string | undefined {
  const queued = c.pending[c.pending.length - 1];
  if (queued) return queued;
  let newest: { turnId: string; seq: number } | undefined;
  const started = new Set<string>();
  for (const t of c.state.turns) {
    started.add(t.turnId);
    if (!newest || t.seq > newest.seq) newest = { turnId: t.turnId, seq: t.seq };
  }
  for (const done of c.state.completions.values()) {
    if (!started.has(done.turnId) && (!newest || done.seq > newest.seq))
      newest = { turnId: done.turnId, seq: done.seq };
  }
  return newest?.turnId;
}
