import * as fs from "node:fs";
import { closedDetail } from "../artifacts/closing.js";
import type { CompletionStatus, MusterEvent } from "../artifacts/events.js";
import { childFiles } from "../artifacts/layout.js";
import { completeQueuedTurns } from "../artifacts/queued.js";
import { readAllRecords } from "../artifacts/reader.js";
import type { EventAppender } from "../artifacts/store.js";
import type { Backend, HostControl, PaneRef } from "../mux/backend.js";
import { applyEvents, type ChildState, emptyState, openTurn } from "./state.js";
import { storeAt } from "./stores.js";

// A pane that never produced child_started gets this long before it counts as lost.
const START_GRACE_MS = 15_000;
// A live pane whose host has not written child_started in this long is stuck, not slow: 25 spawns under
// a load of 28 on 2 cores started within 3 s. Without this bound a waiter waited as long as the pane
// lived (6 min 45 s in one case).
export const HOST_START_LIMIT_MS = 30_000;

/**
 * When a child's host was last heard from: its newest event's own time, never earlier than `before`. By the
 * events' time, not their reading's: a dead child's old events, read when a wait or watch starts, prove nothing.
 */
export function lastHeard(before: number | undefined, events: readonly MusterEvent[]): number | undefined {
  const last = Date.parse(events[events.length - 1]?.ts ?? "");
  return Number.isFinite(last) ? Math.max(before ?? 0, last) : before;
}

/** Whether a child needs no probe yet: its host wrote within the last `ms`, so a probe could say no more. */
export const heardWithin = (heard: number | undefined, ms: number): boolean =>
  heard !== undefined && Date.now() - heard < ms;

/** What a liveness probe concluded for one child. */
export type Verdict = { dead: false } | { dead: true; reason: string };

/**
 * Decides whether a child's host is gone: the host first (definitive; asked through its backend's
 * HostControl, which says "unknown" rather than guess), the pane before the host has started.
 */
export async function probeChild(
  backend: Backend,
  dir: string,
  pane: PaneRef | null,
  createdAt: string,
  hostPid: number | undefined,
): Promise<Verdict> {
  if (hostPid !== undefined) {
    const host = { pid: hostPid, dir, pane };
    if ((await backend.host.alive(host)) !== "dead") return { dead: false };
    const st = await backend.host.exitStatus(host).catch(() => null);
    const how = st ? ` (${st.signal ? `signal ${st.signal}` : `exit code ${st.exitCode}`})` : "";
    const why = await backend.host.deathReason?.(host).catch(() => null);
    return { dead: true, reason: `child host (pid ${hostPid}) is gone${how}${why ? `: ${why}` : ""}` };
  }
  const age = Date.now() - Date.parse(createdAt);
  if (pane) {
    const live = await backend.alive(pane);
    if (live === "dead") {
      const st = await backend.deadStatus(pane).catch(() => null);
      const how = st ? (st.signal ? `signal ${st.signal}` : `exit code ${st.exitCode}`) : "pane vanished";
      return { dead: true, reason: `the pane died before the child host started (${how})` };
    }
    if (live === "alive" && age <= HOST_START_LIMIT_MS) return { dead: false };
    if (live === "alive") return stuckHost(backend, dir, pane);
  }
  return age > START_GRACE_MS
    ? { dead: true, reason: `no child host started within ${START_GRACE_MS / 1000}s` }
    : { dead: false };
}

/**
 * A host that never started although its pane lives: say where its processes sleep (the kernel's wait
 * channel, the one clue to what held it), then close the pane so it cannot start a turn nobody waits for.
 */
async function stuckHost(backend: Backend, dir: string, pane: PaneRef): Promise<Verdict> {
  const events = childFiles(dir).events;
  // No events file (deleted under a running child): nothing says whether its host started, so its pane is
  // never closed on that guess; status names the missing file instead.
  if (!fs.lstatSync(events, { throwIfNoEntry: false })?.isFile()) return { dead: false };
  // The caller's events may be a poll old: a host that started meanwhile is not stuck.
  const started = (): boolean =>
    readAllRecords<{ type?: string }>(events).some((e) => e.type === "child_started");
  if (started()) return { dead: false };
  const seen = backend.host.describeProcesses?.(dir) ?? "";
  await backend.kill(pane).catch(() => undefined);
  if (started()) return { dead: false };
  return {
    dead: true,
    reason: `the child host did not start within ${HOST_START_LIMIT_MS / 1000}s although its pane was alive (${seen || "no host process found"}); the pane was closed`,
  };
}

/**
 * Settles a child whose host is dead (or will not answer) from the parent side, under the artifact lock:
 * the open turn and every turn still queued in the inbox get a completion, the runner's group is killed,
 * and child_exited closes the log. Idempotent: a child already exited is left alone. Returns the
 * child_exited recorded here, none when the child had already exited.
 */
export function settleFromParent(
  dir: string,
  status: Extract<CompletionStatus, "lost" | "cancelled">,
  reason: string,
  host: HostControl,
  pane: PaneRef | null = null,
): Promise<MusterEvent | undefined> {
  return storeAt(dir).appendAsParent((events, log) =>
    settleLocked(events, log, dir, status, reason, host, pane),
  );
}

/** settleFromParent's records, for a caller already holding the child's lock with its log read (`events`). */
export async function settleLocked(
  events: MusterEvent[],
  log: EventAppender,
  dir: string,
  status: Extract<CompletionStatus, "lost" | "cancelled">,
  reason: string,
  host: HostControl,
  pane: PaneRef | null,
): Promise<MusterEvent | undefined> {
  const files = childFiles(dir);
  const state = applyEvents(emptyState(), events);
  if (state.exited) return undefined;
  const open = openTurn(state);
  if (open) {
    await killTurnRunner(state, dir, host, pane);
    log.append({
      type: "completion",
      turnId: open.turnId,
      status,
      reason,
      exitCode: null,
      signal: null,
      by: "parent",
    });
  }
  const dropped = completeQueuedTurns(files.inbox, log, {
    status,
    reason,
    by: "parent",
    skip: (t) => state.completions.has(t) || state.turns.some((x) => x.turnId === t),
  });
  // A cancel that found no turn to stop closed an idle child: closed, not cancelled.
  if (status === "cancelled" && !open && dropped === 0)
    return log.append({
      type: "child_exited",
      reason: "closed",
      detail: closedDetail(files.closing),
      by: "parent",
    });
  return log.append({
    type: "child_exited",
    reason: status === "lost" ? "lost" : "cancelled",
    detail: reason,
    by: "parent",
  });
}

/** Kills the open turn's runner group of a dead host (it leads its own group and outlives the host). */
export async function killTurnRunner(
  state: ChildState,
  dir: string,
  host: HostControl,
  pane: PaneRef | null,
): Promise<void> {
  const open = openTurn(state);
  if (!open) return;
  // A host killed between starting its runner and recording it left no pid: its place looks for the runner.
  const groups =
    open.runnerPid !== undefined ? [open.runnerPid] : ((await host.runnersOf?.(dir).catch(() => [])) ?? []);
  // The runner's group lives where the host ran: its backend's host control reaches it.
  for (const pgid of groups)
    await host.signalGroup({ pid: state.hostPid ?? 0, dir, pane }, pgid, "SIGKILL").catch(() => undefined);
}

/**
 * Records the end of a child whose host a probe found dead. A child marked closing is being cancelled (its
 * cancel may have closed the pane before the host could record anything): whoever notices first records the
 * cancel, not a lost child.
 */
export function settleDeadHost(
  dir: string,
  reason: string,
  host: HostControl,
  pane: PaneRef | null,
): Promise<MusterEvent | undefined> {
  return storeAt(dir).isClosing()
    ? settleFromParent(dir, "cancelled", `cancelled by muster cancel (${reason})`, host, pane)
    : settleFromParent(dir, "lost", reason, host, pane);
}

/** A resume whose new host never started: its queued turns get `lost` completions (the child stays exited). */
export async function settleQueuedFromParent(dir: string, reason: string): Promise<void> {
  const store = storeAt(dir);
  await store.appendAsParent((events, log) => {
    const state = applyEvents(emptyState(), events);
    completeQueuedTurns(store.files.inbox, log, {
      status: "lost",
      reason,
      by: "parent",
      skip: (t) => state.completions.has(t) || state.turns.some((x) => x.turnId === t),
    });
  });
}
