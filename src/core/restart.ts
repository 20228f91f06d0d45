/**
 * What a parent does with a child whose host a probe found dead, whoever noticed (wait, the watcher, ls): a
 * child under a restart policy with a turn open and restarts left gets that turn started again on its
 * conversation in a new host (after a backoff); any other is settled as before (`lost`, or `cancelled` while a
 * cancel is under way). The decision is taken under the child's lock from its log alone, so two parents that
 * notice the same death restart it once.
 */
import * as fs from "node:fs";
import type { MusterEvent, TurnStartedEvent } from "../artifacts/events.js";
import { promptFile } from "../artifacts/layout.js";
import { everyReason, replayPrompt, restartBackoffMs } from "../artifacts/restart.js";
import type { Backend, PaneRef } from "../mux/backend.js";
import { oneLine } from "../util/text.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { HOST_START_LIMIT_MS, killTurnRunner, probeChild, settleDeadHost, settleLocked } from "./liveness.js";
import { tellLost } from "./lost-notice.js";
import type { RegistryEntry } from "./registry.js";
import { RELAUNCH_START_MS, relaunchHost } from "./relaunch.js";
import { applyEvents, emptyState, openTurn } from "./state.js";
import { storeAt } from "./stores.js";

export {
  DEFAULT_RESTARTS,
  MAX_RESTARTS,
  parseRestart,
  RESTART_RULE,
  type RestartPolicy,
  replayPrompt,
} from "../artifacts/restart.js";

/** A restart under way (its host not started yet) is left alone this long past its backoff. */
export const RESTART_PENDING_MS = RELAUNCH_START_MS + HOST_START_LIMIT_MS;
// Bounds what is read back of a prompt to replay (a prompt is at most 1 MiB).
const MAX_REPLAY_BYTES = 2 * 1024 * 1024;

/** What the death of a host led to. */
export type DeathOutcome =
  /** settled from here (lost or cancelled), or already settled */
  | "settled"
  /** a new host runs the turn again */
  | "restarted"
  /** another parent's restart is under way, or this one's new host did not start (a later probe decides) */
  | "pending";

type Decision =
  /** `recorded`: the child_exited this process recorded (none: another had) */
  | { kind: "settled"; recorded?: MusterEvent }
  | { kind: "pending" }
  | { kind: "restart"; turnId: string; attempt: number; prompt: string; model?: string; reasoning?: string };

/**
 * Handles a host found dead: restarts its open turn under the child's restart policy, else settles it. `entry`
 * is its registry entry (none: it cannot be relaunched from here and is settled).
 */
export async function onHostDeath(
  m: CoreContext,
  entry: RegistryEntry | undefined,
  dir: string,
  reason: string,
  backend: Backend,
  pane: PaneRef | null,
): Promise<DeathOutcome> {
  const store = storeAt(dir);
  const policy = entry && !store.isClosing() ? store.readMeta()?.restart : undefined;
  if (!policy || !entry) {
    tellLost(m.env, dir, await settleDeadHost(dir, reason, backend.host, pane));
    return "settled";
  }
  let decided = await decide(dir, reason, policy.onLost, backend, pane);
  for (let tries = 0; decided.kind === "restart" && tries <= policy.onLost; tries++) {
    const failed = await restartTurn(m, entry, dir, decided);
    if (failed === undefined) return "restarted";
    if (failed === "") return "pending";
    // Its new host did not start: that is this restart's death, decided at once rather than after the wait.
    decided = await decide(dir, failed, policy.onLost, backend, pane, true);
  }
  if (decided.kind === "settled") tellLost(m.env, dir, decided.recorded);
  return decided.kind === "pending" ? "pending" : "settled";
}

/** Under the child's lock: restart its open turn (recorded), leave a restart under way alone, or settle it. */
function decide(
  dir: string,
  reason: string,
  max: number,
  backend: Backend,
  pane: PaneRef | null,
  relaunchFailed = false,
): Promise<Decision> {
  const store = storeAt(dir);
  return store.appendAsParent(async (events, log): Promise<Decision> => {
    const state = applyEvents(emptyState(), events);
    if (state.exited) return { kind: "settled" };
    // A cancel began since the policy was read: the cancel's word, as settleDeadHost would say it.
    if (store.isClosing()) {
      const why = `cancelled by muster cancel (${reason})`;
      await settleLocked(events, log, dir, "cancelled", why, backend.host, pane);
      return { kind: "settled" };
    }
    const open = openTurn(state);
    const lost = async (why: string): Promise<Decision> => ({
      kind: "settled",
      recorded: await settleLocked(events, log, dir, "lost", why, backend.host, pane),
    });
    if (!open) return lost(reason);
    const restarts = events.filter(
      (e): e is Extract<MusterEvent, { type: "restarted" }> =>
        e.type === "restarted" && e.turnId === open.turnId,
    );
    let why = reason;
    const underWay = restartUnderWay(events);
    if (underWay) {
      const age = Date.now() - Date.parse(underWay.ts);
      if (!relaunchFailed && age < restartBackoffMs(underWay.attempt) + RESTART_PENDING_MS)
        return { kind: "pending" };
      if (!relaunchFailed)
        why = `the host started for restart ${underWay.attempt} did not run within ${Math.round(age / 1000)} s`;
    }
    if (restarts.length >= max) return lost(everyReason(why, restarts, max));
    const started = events.findLast(
      (e): e is TurnStartedEvent => e.type === "turn_started" && e.turnId === open.turnId,
    );
    const original = readPrompt(dir, open.turnId);
    if (original === undefined)
      return lost(
        `${why}; its turn could not be restarted: its prompt (prompts/${open.turnId}.txt) is not readable`,
      );
    await killTurnRunner(state, dir, backend.host, pane);
    const attempt = restarts.length + 1;
    log.append({
      type: "restarted",
      turnId: open.turnId,
      reason: oneLine(why, 1000),
      attempt,
      max,
      by: "parent",
    });
    return {
      kind: "restart",
      turnId: open.turnId,
      attempt,
      prompt: replayPrompt(original, why, attempt, max),
      ...(started?.model ? { model: started.model } : {}),
      ...(started?.reasoning ? { reasoning: started.reasoning } : {}),
    };
  });
}

/** The newest parent-side restart whose new host has not started yet (no child_started since), if any. */
function restartUnderWay(events: MusterEvent[]): Extract<MusterEvent, { type: "restarted" }> | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === "child_started") return undefined;
    if (e.type === "restarted" && e.by === "parent") return e;
  }
  return undefined;
}

function readPrompt(dir: string, turnId: string): string | undefined {
  try {
    const file = promptFile(dir, turnId);
    const st = fs.lstatSync(file);
    if (!st.isFile() || st.size > MAX_REPLAY_BYTES) return undefined;
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

/**
 * Queues the turn again (same id, the replay prompt), waits out the backoff and starts a new host. Returns
 * undefined once it runs, "" when a cancel came meanwhile (the cancel settles it), or why its host did not start.
 */
async function restartTurn(
  m: CoreContext,
  entry: RegistryEntry,
  dir: string,
  d: Extract<Decision, { kind: "restart" }>,
): Promise<string | undefined> {
  const store = storeAt(dir);
  // One queued copy of the turn, whoever queued it (a relaunch that failed left its copy there).
  if (!store.queuedTurns().includes(d.turnId))
    store.dropInboxItem({
      v: 1,
      turnId: d.turnId,
      prompt: d.prompt,
      source: "inbox",
      ...(d.model ? { model: d.model } : {}),
      ...(d.reasoning ? { reasoning: d.reasoning } : {}),
      createdAt: new Date().toISOString(),
    });
  await new Promise((r) => setTimeout(r, restartBackoffMs(d.attempt)));
  // A cancel came meanwhile (it settles the child), or another parent settled it: no new host.
  const now = m.reload(entry);
  if (store.isClosing() || now.state.exited) return "";
  try {
    await relaunchHost(m, now);
    return undefined;
  } catch (e) {
    return `the host started for restart ${d.attempt} did not start: ${(e as Error).message}`;
  }
}

/** Turns a dead host into a restart (its policy) or a recorded `lost` (see onHostDeath); returns its fresh state. */
export async function reconcileChild(m: CoreContext, c: LoadedChild): Promise<LoadedChild> {
  // An unreadable child's events.ndjson may be a FIFO or a device: never append to it.
  if (c.status === "closed" || c.status === "lost" || c.status === "unreadable") return c;
  let backend: Backend;
  try {
    backend = m.backendOf(c.entry);
  } catch {
    // Its backend is not loaded in this process: nothing here can prove its host dead.
    return c;
  }
  const v = await probeChild(backend, c.files.dir, c.entry.pane, c.entry.createdAt, c.state.hostPid);
  if (!v.dead) return c;
  await onHostDeath(m, c.entry, c.files.dir, v.reason, backend, c.entry.pane);
  return m.reload(c.entry);
}
