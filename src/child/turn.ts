import * as fs from "node:fs";
import * as path from "node:path";
import { readCancelSnapshot, snapshotText } from "../artifacts/cancel-snapshot.js";
import type { CompletionEvent, EventInput, OutputError, OutputRef, Verified } from "../artifacts/events.js";
import type { InboxItem } from "../artifacts/inbox.js";
import { promptFile } from "../artifacts/layout.js";
import { MAX_SNAPSHOT_BYTES, outputTooLarge, sha256Hex, snapshotOutput } from "../artifacts/snapshot.js";
import { isTerminal } from "../artifacts/tree-pause.js";
import { watchParentCheckout } from "../isolation/watch.js";
import { readIsolation } from "../isolation/worktree.js";
import type { TurnInput } from "../runners/types.js";
import { isFork } from "../sessions/fork.js";
import {
  appendSession,
  type LoadedSession,
  sessionAsOfNow,
  transcript,
  transcriptPrompt,
} from "../sessions/store.js";
import { writeFileAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { AnswerSink } from "./answer.js";
import { appendEnding } from "./disk-full.js";
import { rateLimitWait, sleepUnlessStopped } from "./rate-limit.js";
import { type Outcome, outcomeWithoutRunner, type Reap, runPlan, type TurnState } from "./run-plan.js";
import { boundText, type TurnControl } from "./turn-control.js";
import type { Asked, TurnDeps } from "./turn-deps.js";
import { recordAttempt, restartAgent, verifyAnswer } from "./turn-retries.js";

export { boundText, type StopReason, TurnControl } from "./turn-control.js";
export type { Conversation, Refusal, TurnDeps } from "./turn-deps.js";

/**
 * Runs one turn end to end: records turn_started, runs the runner, snapshots the answer, records the completion.
 * A record that cannot be written (a full disk) fails the turn — it settles errored saying so; the records
 * that start and end it are written with the reserve. A completion not even that saves is thrown to the host.
 */
export async function runTurn(
  deps: TurnDeps,
  item: InboxItem,
  itemFile: string,
  n: number,
  control: TurnControl,
): Promise<{ completion: CompletionEvent; reap: Reap }> {
  const { files, log, render, meta, conversation, reserve } = deps;
  const started = Date.now();
  const model = item.model ?? conversation.model;
  const reasoning = item.reasoning ?? conversation.reasoning;
  reserve?.hold();
  const failed = (e: Error): void => {
    // What is held back is for the records that end the turn.
    reserve?.release();
    control.fail(e);
  };
  const pFile = promptFile(files.dir, item.turnId);
  try {
    writeFileAtomic(pFile, item.prompt);
  } catch (e) {
    failed(new Error(`cannot write the prompt file: ${(e as Error).message}`, { cause: e }));
  }
  const sink = new AnswerSink(files.output, failed);
  const promptBuf = Buffer.from(item.prompt, "utf8");
  // Without this record the turn cannot be settled at all: written with the reserve, or thrown to the host.
  appendEnding(
    log,
    reserve,
    () => ({
      type: "turn_started",
      turnId: item.turnId,
      source: item.source,
      promptBytes: promptBuf.length,
      promptSha256: sha256Hex(promptBuf),
      promptPath: `prompts/${item.turnId}.txt`,
      ...(model ? { model } : {}),
      ...(reasoning ? { reasoning } : {}),
    }),
    (e) => failed(new Error(`the turn's start could not be recorded: ${e.message}`, { cause: e })),
  );
  fs.rmSync(itemFile, { force: true });
  const history = sessionAsOfNow(conversation.sessionFile);
  try {
    appendSession(conversation.sessionFile, [
      {
        type: "message",
        role: "user",
        text: item.prompt,
        ts: new Date().toISOString(),
        metadata: {
          turnId: item.turnId,
          source: item.source,
          ...(model ? { model } : {}),
          ...(reasoning ? { reasoning } : {}),
          ...(conversation.runnerSessionId ? { runnerSessionId: conversation.runnerSessionId } : {}),
        },
      },
    ]);
  } catch (e) {
    failed(new Error(`the conversation could not be written: ${(e as Error).message}`, { cause: e }));
  }
  render.turnStarted(n, item.prompt, item.source);
  // An isolated child: what it writes into its parent's checkout during the turn is recorded (isolation/).
  const parentCheck = watchParentCheckout(files.dir, readIsolation(files.dir), item.turnId);

  const state: TurnState = { sink, result: undefined, usage: undefined, runnerSessionId: undefined };
  let outcome: Outcome;
  let reap: Reap | undefined;
  let verified: Verified | undefined;
  // The shared budget is checked as the turn starts: a turn already running always finishes.
  const refusal = control.failure ? undefined : deps.refuse?.();
  if (control.failure) {
    outcome = outcomeWithoutRunner(control, control.failure);
  } else if (refusal) {
    outcome = { ...refusal, exitCode: null, signal: null };
  } else {
    let asked: Asked = { item, pFile, history };
    let checks = 0;
    let waits = 0;
    for (;;) {
      ({ outcome, reap } = await runAgent(deps, asked, control, state));
      if (outcome.died && meta.restart && !control.reason && !control.failure) {
        // The agent's process died mid-turn: under the child's restart policy it runs the turn again.
        const next = await restartAgent(deps, asked, outcome, control);
        if ("outcome" in next) {
          outcome = next.outcome;
          break;
        }
        if (state.runnerSessionId) conversation.runnerSessionId = state.runnerSessionId;
        sink.replace("");
        state.result = undefined;
        control.explicit = undefined;
        asked = next.asked;
        continue;
      }
      // A rate limit that lifts soon: wait for it, then the agent runs the turn again.
      const waitMs = control.reason || control.failure ? undefined : rateLimitWait(outcome, waits);
      if (waitMs !== undefined) {
        waits += 1;
        const resetAt = outcome.providerError!.resetAt!;
        log.append({
          type: "rate_limited",
          turnId: item.turnId,
          resetAt,
          attempt: waits,
          reason: boundText(outcome.reason ?? "rate limited"),
        });
        render.info(`rate limited: running the turn again at ${resetAt}`);
        // The failed attempt's process goes first; its words are not the answer.
        await reap?.done;
        reap = undefined;
        if (!(await sleepUnlessStopped(control, waitMs))) {
          outcome = outcomeWithoutRunner(control, control.failure ?? new Error("stopped"));
          break;
        }
        if (state.runnerSessionId) conversation.runnerSessionId = state.runnerSessionId;
        sink.replace("");
        state.result = undefined;
        control.explicit = undefined;
        continue;
      }
      const check = meta.verify;
      if (!check || outcome.status !== "completed" || control.explicit?.status === "errored") break;
      // The check judges what the agent left behind: its process is gone first.
      await reap?.done;
      reap = undefined;
      checks += 1;
      const attempt = checks;
      const judged = await verifyAnswer(deps, item.turnId, check, attempt, control);
      verified = judged.verified;
      if (judged.outcome) {
        outcome = judged.outcome;
        break;
      }
      if (!judged.corrective) break;
      // The failure goes back to the agent in the same turn: its answer and the correction join the conversation.
      if (control.explicit?.text) sink.replace(control.explicit.text);
      try {
        const before = recordAttempt(deps, item.turnId, sink.tail().text, state, judged.corrective, {
          model,
          reasoning,
        });
        const next = path.join(path.dirname(pFile), `${item.turnId}.verify-${attempt}.txt`);
        writeFileAtomic(next, judged.corrective);
        const { context: _snapshotOnce, ...rest } = item;
        asked = { item: { ...rest, prompt: judged.corrective }, pFile: next, history: before };
      } catch (e) {
        failed(new Error(`the correction could not be recorded: ${(e as Error).message}`, { cause: e }));
        outcome = outcomeWithoutRunner(control, control.failure ?? (e as Error));
        break;
      }
      if (state.runnerSessionId) conversation.runnerSessionId = state.runnerSessionId;
      sink.replace("");
      state.result = undefined;
      control.explicit = undefined;
    }
  }

  // The answer, in order: `muster done|error` text, the agent's `result` text (already in the sink), the stream.
  if (control.explicit?.text) sink.replace(control.explicit.text);
  sink.close();
  const eventId = uuidv7();
  const snap = snapshotOf(files.dir, eventId, sink, control.failure);
  if ("outputError" in snap && snap.outputError.code === "output_unreadable" && !control.failure)
    failed(new Error(snap.outputError.message));
  // The conversation is written before the completion: whoever sees the completion finds the turn recorded.
  const answer = sink.tail();
  try {
    appendSession(conversation.sessionFile, [
      {
        type: "message",
        role: "assistant",
        text: answer.whole
          ? answer.text
          : `[the answer is ${sink.total} bytes, over the ${MAX_SNAPSHOT_BYTES}-byte snapshot limit; its end follows, all of it was in output.md]\n${answer.text}`,
        ts: new Date().toISOString(),
        metadata: {
          turnId: item.turnId,
          status: withFailure(outcome, control).status,
          ...(state.usage ? { usage: state.usage } : {}),
          ...(state.runnerSessionId ? { runnerSessionId: state.runnerSessionId } : {}),
          ...("output" in snap ? { output: snap.output.path } : {}),
        },
      },
    ]);
  } catch (e) {
    failed(new Error(`the conversation could not be written: ${(e as Error).message}`, { cause: e }));
  }
  outcome = withFailure(outcome, control);
  parentCheck?.();
  if (outcome.status === "errored" && isTerminal(outcome.providerError))
    deps.pauseTree?.(outcome.providerError, item.turnId);
  const completionOf = (): EventInput => ({
    type: "completion",
    eventId,
    turnId: item.turnId,
    status: outcome.status,
    ...(outcome.reason ? { reason: boundText(outcome.reason) } : {}),
    ...(outcome.stderr ? { stderr: boundText(outcome.stderr) } : {}),
    ...(outcome.providerError && outcome.status === "errored"
      ? { providerError: outcome.providerError }
      : {}),
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    durationMs: Date.now() - started,
    ...(state.usage ? { usage: state.usage } : {}),
    ...snap,
    ...(state.runnerSessionId ? { runnerSessionId: state.runnerSessionId } : {}),
    ...(verified ? { verified } : {}),
    by: "child",
  });
  // A completion the disk refuses is written with the reserve, saying the turn failed for it.
  const completion = appendEnding(log, reserve, completionOf, (e) => {
    control.fail(new Error(`the completion could not be written: ${e.message}`, { cause: e }));
    outcome = withFailure(outcome, control);
  }) as CompletionEvent;
  // The next turn continues from here: same settings unless it names others, same runner session.
  conversation.model = model;
  conversation.reasoning = reasoning;
  if (state.runnerSessionId) conversation.runnerSessionId = state.runnerSessionId;
  render.completion(completion, state.usage);
  return { completion, reap: afterSettle(deps, item.turnId, reap) };
}

/** Runs the agent once on `asked`: on the engine's live process, or the runner's one-shot plan. */
async function runAgent(
  deps: TurnDeps,
  asked: Asked,
  control: TurnControl,
  state: TurnState,
): Promise<{ outcome: Outcome; reap: Reap | undefined }> {
  const { files, meta, conversation } = deps;
  const { item, pFile, history } = asked;
  const model = item.model ?? conversation.model;
  const reasoning = item.reasoning ?? conversation.reasoning;
  try {
    const forRunner = runnerPrompt(deps, item, pFile, history, !!conversation.runnerSessionId);
    const input: TurnInput = {
      turnId: item.turnId,
      prompt: forRunner.prompt,
      promptFile: forRunner.file,
      cwd: meta.cwd,
      runnerDir: files.runner,
      env: deps.env,
      ...(model ? { model } : {}),
      ...(reasoning ? { reasoning } : {}),
      ...(conversation.runnerSessionId ? { runnerSessionId: conversation.runnerSessionId } : {}),
      ...(meta.profile.systemPrompt ? { systemPrompt: meta.profile.systemPrompt } : {}),
      ...(meta.profile.command ? { command: meta.profile.command } : {}),
      ...(meta.profile.protocol ? { protocol: meta.profile.protocol } : {}),
      ...(meta.profile.tools ? { tools: meta.profile.tools } : {}),
      ...(meta.profile.disallowedTools ? { disallowedTools: meta.profile.disallowedTools } : {}),
      ...(meta.profile.maxTurns !== undefined ? { maxTurns: meta.profile.maxTurns } : {}),
      ...(meta.profile.permissions === "ask" ? { permissions: "ask" as const } : {}),
      ...(meta.profile.acpMode ? { acpMode: meta.profile.acpMode } : {}),
      ...(isSchema(item.outputSchema) ? { outputSchema: item.outputSchema } : {}),
    };
    const live = deps.engine.liveTurn(deps.runner, input);
    if (live) {
      // A long-lived process takes the turn; it stays for the next one (nothing to reap).
      // A new process whose agent could not reload the conversation gets it as a transcript.
      const earlier = () => transcript(history());
      return { outcome: await live({ deps, control, state, earlier }), reap: undefined };
    }
    const plan = deps.runner.plan(input);
    return await runPlan(deps, item.turnId, plan, control, state);
  } catch (e) {
    // A file the runner needs that could not be written is a failed record like any other (a full disk).
    if ((e as NodeJS.ErrnoException).syscall) control.fail(e as Error);
    const reason = control.failure?.message ?? (e as Error).message;
    return { outcome: { status: "errored", reason, exitCode: null, signal: null }, reap: undefined };
  }
}

/** A runner still running when its turn settled: a bad exit is recorded after the completion, never changing it. */
function afterSettle(deps: TurnDeps, turnId: string, reap: Reap | undefined): Reap {
  if (!reap) return { done: Promise.resolve(undefined), kill: () => {} };
  const done = reap.done.then((exit) => {
    if (!exit || (exit.code === 0 && !exit.signal)) return exit;
    const how = exit.signal ? `by ${exit.signal}` : `with code ${exit.code}`;
    deps.render.info(
      exit.killed
        ? `the agent did not exit after its final record: killed ${how}`
        : `the agent exited ${how} after its final record (the turn's outcome stands)`,
    );
    try {
      deps.log.append({
        type: "runner_exited",
        turnId,
        pid: exit.pid,
        exitCode: exit.code,
        signal: exit.signal,
        killed: exit.killed,
      });
    } catch {
      // Best effort: the turn is recorded; a full disk only loses this footnote.
    }
    return exit;
  });
  return { done, kill: reap.kill };
}

/** A record that failed after the runner ended still fails the turn; a stop (cancel, pane closed) stays what it was. */
function withFailure(outcome: Outcome, control: TurnControl): Outcome {
  const failure = control.failure?.message;
  if (!failure || control.reason || outcome.reason?.includes(failure)) return outcome;
  const reason = outcome.status === "errored" && outcome.reason ? `${outcome.reason}; ${failure}` : failure;
  return { ...outcome, status: "errored", reason };
}

/** The completion's snapshot: the answer when it fits, else why not (too large, or not written at all). */
function snapshotOf(
  dir: string,
  eventId: string,
  sink: AnswerSink,
  failure: Error | undefined,
): { output: OutputRef } | { outputError: OutputError } {
  // After a failed write the disk is full: what little is left is for the conversation and the completion.
  if (failure)
    return { outputError: { code: "output_unreadable", message: `not written: ${failure.message}` } };
  const exact = sink.exact();
  return exact ? snapshotOutput(dir, eventId, exact) : { outputError: outputTooLarge(sink.total) };
}

/**
 * The prompt the runner gets: the user's exact prompt, or — for runners that resume by transcript,
 * after a completed turn — the conversation so far plus the new request, in a file of its own. A fork
 * (`spawn --fork`) is handed its conversation that way too until its runner has a session of its own:
 * the runner's session of the forked child is not the fork's to continue.
 */
function runnerPrompt(
  deps: TurnDeps,
  item: InboxItem,
  pFile: string,
  history: () => LoadedSession,
  runnerResumes: boolean,
): { prompt: string; file: string } {
  const mode = deps.runner.resumeMode?.(deps.meta.profile.protocol) ?? "none";
  const byText = mode === "transcript" || (!runnerResumes && isFork(history()));
  const before = byText ? transcript(history()) : "";
  // A turn resumed after `cancel --snapshot`: where the cancelled turn stood goes ahead of the request.
  const turnId = item.context ? /^snapshots\/([0-9a-f-]{36})\.json$/.exec(item.context)?.[1] : undefined;
  const snap = turnId ? readCancelSnapshot(deps.files.dir, turnId) : undefined;
  if (before === "" && !snap) return { prompt: item.prompt, file: pFile };
  const prompt = transcriptPrompt(before, item.prompt, snap ? [snapshotText(snap)] : []);
  const file = pFile.replace(/\.txt$/, ".runner.txt");
  writeFileAtomic(file, prompt);
  return { prompt, file };
}

/** An inbox item's schema is used only when it is a JSON object (the file is data, not trusted shape). */
function isSchema(v: unknown): v is object {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
