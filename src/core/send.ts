import * as fs from "node:fs";
import { pathsOfArtifactDir, primariesDir, primaryPaths } from "../artifacts/layout.js";
import { pauseInForce } from "../artifacts/tree-pause.js";
import { MusterError } from "../base/errors.js";
import { resolveResumeSettings } from "../profiles/settings.js";
import { lastSettingsOf, sessionFileOf } from "../sessions/store.js";
import { assertIdOrPrefix, uuidv7 } from "../util/ids.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { continueHint, NOT_RESUMABLE_NOTE } from "./hints.js";
import { checkPrompt } from "./host-launch.js";
import { isChildName } from "./names.js";
import { openTurn } from "./state.js";
import { pauseView, type TreePauseView } from "./tree-pause.js";

/** Per-turn overrides; an omitted one keeps the child's last value. */
export interface TurnSettings {
  model?: string;
  reasoning?: string;
}

export interface FollowUp {
  id: string;
  turnId: string;
  /** It waits behind a running turn. */
  queued: boolean;
  model?: string;
  reasoning?: string;
  warnings: string[];
  /** Set when a resume had to open a new pane (the old host was gone). */
  newPane?: string;
  /** `mode: "now"`: the running turn this follow-up interrupts (it settles `interrupted`). */
  interrupts?: string;
  /** The tree is paused (a provider's quota or credential): the turn waits until `resume-tree`. */
  paused?: TreePauseView;
}

/** How a follow-up meets a running turn: after it (queue), in its place (now); stop ends it and adds nothing. */
export type SendMode = "queue" | "now" | "stop";

/** `c` if it can still take a turn; an exited or lost child is a clear error naming how to continue. */
export function assertRunning(c: LoadedChild, cwd: string): LoadedChild {
  if (c.status === "closed" || c.status === "lost") {
    const next = continueHint(c, cwd);
    const note = next.action === "spawn" ? `; ${NOT_RESUMABLE_NOTE}` : "";
    throw new MusterError(
      "not_running",
      `child ${c.entry.id} has ${c.status === "lost" ? "been lost" : "exited"}${note}`,
      { next },
    );
  }
  return c;
}

/** Queues a running child's next turn; with mode `now` its running turn is interrupted for it. */
export function sendFollowUp(
  c: LoadedChild,
  prompt: string,
  opts: TurnSettings & { mode?: Exclude<SendMode, "stop"> },
  env: NodeJS.ProcessEnv,
): FollowUp {
  const f = queueTurn(c, prompt, opts, env);
  // Queued first: when the running turn stops, the follow-up is already there to run next.
  const interrupts = opts.mode === "now" ? interruptTurn(c, "steered") : undefined;
  return interrupts ? { ...f, interrupts } : f;
}

/** Queues the next turn of a child still running (see sendFollowUp); a prompt over the limit is refused first. */
export function sendTo(
  m: Pick<CoreContext, "child" | "cwd" | "env">,
  idOrPrefix: string,
  prompt: string,
  opts: TurnSettings & { mode?: Exclude<SendMode, "stop"> },
): FollowUp {
  checkPrompt(prompt);
  return sendFollowUp(assertRunning(m.child(idOrPrefix), m.cwd), prompt, opts, m.env);
}

/** Stops a running child's turn and keeps the child (`send --mode stop`); the turn stopped, if any. */
export function stopTurnOf(
  m: Pick<CoreContext, "child" | "cwd">,
  idOrPrefix: string,
): { id: string; turnId?: string } {
  const c = assertRunning(m.child(idOrPrefix), m.cwd);
  const turnId = interruptTurn(c, "stopped");
  return { id: c.entry.id, ...(turnId ? { turnId } : {}) };
}

/**
 * Asks the child's host to stop its running turn (the child stays): the turn settles `interrupted`. Only the
 * turn running now is named, so a turn that starts in between (the follow-up itself) is never stopped.
 * Returns the turn stopped, or undefined when none was running.
 */
export function interruptTurn(c: LoadedChild, why: "steered" | "stopped"): string | undefined {
  const running = openTurn(c.state)?.turnId;
  if (running) c.store.writeControl({ kind: "interrupt", turnId: running, why });
  return running;
}

/**
 * Queues a turn in the child's inbox with its settings resolved: explicit overrides are validated and win,
 * omitted ones keep the last turn's values (from the child's conversation file).
 */
export function queueTurn(
  c: LoadedChild,
  prompt: string,
  opts: TurnSettings & { context?: string },
  env: NodeJS.ProcessEnv,
): FollowUp {
  const last = lastSettingsOf(sessionFileOf(c.files.dir));
  const settings = resolveResumeSettings({
    runner: c.entry.runner,
    call: {
      ...(opts.model ? { model: opts.model } : {}),
      ...(opts.reasoning ? { reasoning: opts.reasoning } : {}),
    },
    last,
    env,
  });
  const turnId = uuidv7();
  c.store.dropInboxItem({
    v: 1,
    turnId,
    prompt,
    source: "inbox",
    ...(settings.model ? { model: settings.model } : {}),
    ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
    ...(opts.context ? { context: opts.context } : {}),
    createdAt: new Date().toISOString(),
  });
  const held = pauseInForce(pathsOfArtifactDir(c.files.dir).primary.dir);
  const paused = held ? pauseView(held) : undefined;
  return {
    id: c.entry.id,
    turnId,
    queued: c.status === "running" || c.status === "starting" || c.status === "queued",
    ...(settings.model ? { model: settings.model } : {}),
    ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
    warnings: settings.warnings,
    ...(paused ? { paused } : {}),
  };
}

/** Which primary owns a child id (or unique prefix/suffix), by its conversation file; undefined if none does. */
export function findOwner(root: string, idOrPrefix: string): string | undefined {
  // A name is only ever looked up in this primary's registry.
  if (isChildName(idOrPrefix)) return undefined;
  const want = assertIdOrPrefix(idOrPrefix);
  let names: string[];
  try {
    names = fs.readdirSync(primariesDir(root));
  } catch {
    return undefined;
  }
  for (const p of names) {
    let files: string[];
    try {
      files = fs.readdirSync(primaryPaths(root, p).subagents);
    } catch {
      continue;
    }
    const stem = (f: string) => f.slice(0, -".jsonl".length);
    if (
      files.some(
        (f) =>
          f.endsWith(".jsonl") && (stem(f) === want || stem(f).startsWith(want) || stem(f).endsWith(want)),
      )
    )
      return p;
  }
  return undefined;
}
