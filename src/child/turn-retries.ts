/**
 * The runs of the agent inside one turn beyond its first (driven by turn.ts): a run after the agent died under
 * the child's restart policy, and a correction after the child's acceptance check failed. Each is recorded, and
 * the turn settles once, with the last run's outcome.
 */
import * as path from "node:path";
import type { MusterEvent, RestartedEvent, Verified, VerifySpec } from "../artifacts/events.js";
import { readAllRecords } from "../artifacts/reader.js";
import { everyReason, replayPrompt, restartBackoffMs } from "../artifacts/restart.js";
import { appendSession, type LoadedSession, sessionAsOfNow } from "../sessions/store.js";
import { writeFileAtomic } from "../util/fsx.js";
import { type Outcome, outcomeWithoutRunner, type TurnState } from "./run-plan.js";
import { boundText, type TurnControl } from "./turn-control.js";
import type { Asked, TurnDeps } from "./turn-deps.js";
import { correctivePrompt, failureLine, passed, runCheck } from "./verify.js";

/**
 * The agent died mid-turn (its process killed, its session's process gone) under a restart policy: the turn runs
 * again on the same conversation after a backoff, its prompt a note of what happened ahead of the task; restarts
 * a parent made for this turn (its host died) count too. Past the bound the turn settles lost, naming every death.
 */
export async function restartAgent(
  deps: TurnDeps,
  asked: Asked,
  died: Outcome,
  control: TurnControl,
): Promise<{ asked: Asked } | { outcome: Outcome }> {
  const { meta, files, log, render } = deps;
  const turnId = asked.item.turnId;
  const max = meta.restart!.onLost;
  const reason = died.reason ?? "the agent's process died";
  const before = readAllRecords<MusterEvent>(files.events).filter(
    (e): e is RestartedEvent => e.type === "restarted" && e.turnId === turnId,
  );
  const attempt = before.length + 1;
  if (attempt > max)
    return { outcome: { ...died, status: "lost", reason: everyReason(reason, before, max) } };
  log.append({ type: "restarted", turnId, reason: boundText(reason, 1000), attempt, max, by: "child" });
  render.info(`the agent died (${reason}); restarting it on the same conversation (${attempt} of ${max})`);
  // A stop during the backoff ends the wait and the turn.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, restartBackoffMs(attempt));
    control.onStop(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  control.onStop(() => {});
  if (control.reason || control.failure)
    return { outcome: outcomeWithoutRunner(control, control.failure ?? new Error("stopped")) };
  const prompt = replayPrompt(asked.item.prompt, reason, attempt, max);
  const file = path.join(path.dirname(asked.pFile), `${turnId}.restart-${attempt}.txt`);
  writeFileAtomic(file, prompt);
  const { context: _snapshotOnce, ...rest } = asked.item;
  return { asked: { item: { ...rest, prompt }, pFile: file, history: asked.history } };
}

/** How one run of the child's check judged the answer: settled (`outcome`), or a correction to send, or passed. */
export interface Judged {
  verified: Verified;
  /** The turn ends so: failed verification, or a stop that came while the check ran. */
  outcome?: Outcome;
  /** The prompt that sends the failure back to the agent. */
  corrective?: string;
}

/** Runs the child's acceptance check on the answer just given, recording it. */
export async function verifyAnswer(
  deps: TurnDeps,
  turnId: string,
  check: VerifySpec,
  attempt: number,
  control: TurnControl,
): Promise<Judged> {
  const { log, render, meta } = deps;
  render.info(`verifying: ${check.command}${attempt > 1 ? ` (run ${attempt})` : ""}`);
  log.append({ type: "verify_started", turnId, attempt, command: boundText(check.command, 1000) });
  // The agent is quiet while its answer is checked: that is no idle agent.
  deps.checking?.(true);
  const run = await runCheck(check, meta.cwd, deps.env, control).finally(() => deps.checking?.(false));
  const ok = passed(run);
  const retrying = !ok && !run.stopped && !control.reason && !control.failure && attempt <= check.retries;
  log.append({
    type: "verify_finished",
    turnId,
    attempt,
    exitCode: run.exitCode,
    ...(run.signal ? { signal: run.signal } : {}),
    durationMs: run.durationMs,
    outputTail: run.outputTail,
    ...(run.timedOut ? { timedOut: true } : {}),
    retrying,
  });
  const verified: Verified = {
    command: check.command,
    exitCode: run.exitCode,
    ...(run.signal ? { signal: run.signal } : {}),
    durationMs: run.durationMs,
    outputTail: run.outputTail,
    attempts: attempt,
    ...(run.timedOut ? { timedOut: true } : {}),
  };
  if (ok) {
    render.info(`verified: ${check.command} passed`);
    return { verified };
  }
  if (control.reason || control.failure)
    return { verified, outcome: outcomeWithoutRunner(control, control.failure ?? new Error("stopped")) };
  const why = failureLine(check, run);
  if (retrying) {
    render.info(`${why}; the agent is asked to fix it (correction ${attempt} of ${check.retries})`);
    return { verified, corrective: correctivePrompt(check, run, attempt) };
  }
  render.info(why);
  const tries = attempt > 1 ? ` after ${attempt - 1} correction${attempt > 2 ? "s" : ""}` : "";
  return {
    verified,
    outcome: { status: "failed_verification", reason: `${why}${tries}`, exitCode: null, signal: null },
  };
}

/**
 * An attempt the check failed: its answer and the correction that follows it join the conversation. Returns the
 * conversation before the correction (what a runner without native resume is given ahead of it).
 */
export function recordAttempt(
  deps: TurnDeps,
  turnId: string,
  answer: string,
  state: TurnState,
  corrective: string,
  settings: { model: string | undefined; reasoning: string | undefined },
): () => LoadedSession {
  const file = deps.conversation.sessionFile;
  const ts = new Date().toISOString();
  appendSession(file, [
    {
      type: "message",
      role: "assistant",
      text: answer,
      ts,
      metadata: {
        turnId,
        status: "completed",
        ...(state.runnerSessionId ? { runnerSessionId: state.runnerSessionId } : {}),
      },
    },
  ]);
  const before = sessionAsOfNow(file);
  const { model, reasoning } = settings;
  appendSession(file, [
    {
      type: "message",
      role: "user",
      text: corrective,
      ts,
      metadata: {
        turnId,
        source: "verify",
        ...(model ? { model } : {}),
        ...(reasoning ? { reasoning } : {}),
      },
    },
  ]);
  return before;
}
