import { spawn } from "node:child_process";
import * as fs from "node:fs";
import type { ChildMeta, CompletionEvent, CompletionStatus, Usage } from "../artifacts/events.js";
import type { InboxItem } from "../artifacts/inbox.js";
import { type ChildFiles, promptFile } from "../artifacts/layout.js";
import { LineSplitter } from "../artifacts/lines.js";
import type { EventLog } from "../artifacts/log.js";
import { sha256Hex, snapshotOutput } from "../artifacts/snapshot.js";
import { parseStdoutLine } from "../runners/protocol.js";
import type { AgentMessage, Runner, TurnPlan } from "../runners/types.js";
import { appendSession, type LoadedSession, loadSession, transcript } from "../sessions/store.js";
import { writeFileAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { signalGroup, terminateGroup } from "../util/process-group.js";
import type { PaneRenderer } from "./render.js";

// A runner line bigger than this is not protocol; it is dropped and noted.
const MAX_RUNNER_LINE = 16 * 1024 * 1024;
const STDERR_KEEP = 2048;
// Free text inside one event record stays far below the 1 MiB record limit.
const MAX_EVENT_TEXT = 8 * 1024;
export const boundText = (s: string, max = MAX_EVENT_TEXT): string =>
  s.length > max ? `${s.slice(0, max - 1)}…` : s;

/** Why a turn is being stopped from outside. */
export type StopReason = "cancelled" | "interrupted" | "lost";

/** Lets the host stop the running turn (signals arrive outside the turn's own flow). */
export class TurnControl {
  reason: StopReason | undefined;
  /** An explicit result from `muster done|error` inside the pane; wins over the runner's own. */
  explicit: { status: "completed" | "errored"; text: string } | undefined;
  private stopper: ((r: StopReason) => void) | undefined;

  constructor(readonly turnId: string) {}

  /** Called once the agent has exited, before the outcome is decided (late `muster done` requests land here). */
  beforeDecide: (() => void) | undefined;

  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.stopper?.(reason);
  }

  onStop(fn: (r: StopReason) => void): void {
    this.stopper = fn;
    if (this.reason) fn(this.reason);
  }
}

/** The conversation the host carries from turn to turn (seeded from the session file on start). */
export interface Conversation {
  sessionFile: string;
  /** Model and reasoning of the last turn: defaults for a typed line, which names none. */
  model?: string;
  reasoning?: string;
  /** The runner's own session id from the last turn (native resume). */
  runnerSessionId?: string;
}

export interface TurnDeps {
  files: ChildFiles;
  meta: ChildMeta;
  log: EventLog;
  render: PaneRenderer;
  runner: Runner;
  env: Record<string, string>;
  conversation: Conversation;
  /** Why this turn may not run at all (the tree's budget is spent, a cancel began), checked as it starts. */
  refuse?: () => Refusal | undefined;
}

/** A turn settled at its start without running the agent. */
export interface Refusal {
  status: "exhausted" | "cancelled";
  reason: string;
}

const STOP_STATUS: Record<StopReason, { status: CompletionStatus; reason: string }> = {
  cancelled: { status: "cancelled", reason: "cancelled by muster cancel" },
  interrupted: { status: "cancelled", reason: "interrupted in the pane (Ctrl-C)" },
  lost: { status: "lost", reason: "the pane was closed while the turn ran" },
};

interface Outcome {
  status: CompletionStatus;
  reason?: string;
  exitCode: number | null;
  signal: string | null;
}

/** Runs one turn end to end: records turn_started, runs the runner, snapshots the answer, records the completion. */
export async function runTurn(
  deps: TurnDeps,
  item: InboxItem,
  itemFile: string,
  n: number,
  control: TurnControl,
): Promise<CompletionEvent> {
  const { files, log, render, meta, conversation } = deps;
  const started = Date.now();
  const model = item.model ?? conversation.model;
  const reasoning = item.reasoning ?? conversation.reasoning;
  const pFile = promptFile(files.dir, item.turnId);
  writeFileAtomic(pFile, item.prompt);
  // output.md is mutable staging (the snapshot is the record): no fsync needed.
  fs.writeFileSync(files.output, "", { mode: 0o600 });
  const promptBuf = Buffer.from(item.prompt, "utf8");
  log.append({
    type: "turn_started",
    turnId: item.turnId,
    source: item.source,
    promptBytes: promptBuf.length,
    promptSha256: sha256Hex(promptBuf),
    promptPath: `prompts/${item.turnId}.txt`,
    ...(model ? { model } : {}),
    ...(reasoning ? { reasoning } : {}),
  });
  fs.rmSync(itemFile, { force: true });
  const history = loadSession(conversation.sessionFile);
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
  render.turnStarted(n, item.prompt, item.source);

  const state = {
    answer: "",
    result: undefined as Extract<AgentMessage, { type: "result" }> | undefined,
    usage: undefined as Usage | undefined,
    runnerSessionId: undefined as string | undefined,
  };
  let outcome: Outcome;
  // The shared budget is checked as the turn starts: a turn already running always finishes.
  const refusal = deps.refuse?.();
  if (refusal) {
    outcome = { ...refusal, exitCode: null, signal: null };
  } else {
    try {
      const forRunner = runnerPrompt(deps, item, pFile, history);
      const plan = deps.runner.plan({
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
      });
      outcome = await runPlan(deps, item.turnId, plan, control, state);
    } catch (e) {
      outcome = { status: "errored", reason: (e as Error).message, exitCode: null, signal: null };
    }
  }

  const answer = control.explicit?.text || (state.result?.text ?? state.answer);
  const answerBytes = Buffer.from(answer, "utf8");
  fs.writeFileSync(files.output, answerBytes, { mode: 0o600 });
  const eventId = uuidv7();
  const snap = snapshotOutput(files.dir, eventId, answerBytes);
  // The conversation is written before the completion: whoever sees the completion finds the turn recorded.
  appendSession(conversation.sessionFile, [
    {
      type: "message",
      role: "assistant",
      text: answer,
      ts: new Date().toISOString(),
      metadata: {
        turnId: item.turnId,
        status: outcome.status,
        ...(state.usage ? { usage: state.usage } : {}),
        ...(state.runnerSessionId ? { runnerSessionId: state.runnerSessionId } : {}),
        ...("output" in snap ? { output: snap.output.path } : {}),
      },
    },
  ]);
  const completion = log.append({
    type: "completion",
    eventId,
    turnId: item.turnId,
    status: outcome.status,
    ...(outcome.reason ? { reason: boundText(outcome.reason) } : {}),
    exitCode: outcome.exitCode,
    signal: outcome.signal,
    durationMs: Date.now() - started,
    ...(state.usage ? { usage: state.usage } : {}),
    ...snap,
    ...(state.runnerSessionId ? { runnerSessionId: state.runnerSessionId } : {}),
    by: "child",
  }) as CompletionEvent;
  // The next turn continues from here: same settings unless it names others, same runner session.
  conversation.model = model;
  conversation.reasoning = reasoning;
  if (state.runnerSessionId) conversation.runnerSessionId = state.runnerSessionId;
  render.completion(completion, state.usage);
  return completion;
}

/**
 * The prompt the runner gets: the user's exact prompt, or — for runners that resume by transcript,
 * after a completed turn — the conversation so far plus the new request, in a file of its own.
 */
function runnerPrompt(
  deps: TurnDeps,
  item: InboxItem,
  pFile: string,
  history: LoadedSession,
): { prompt: string; file: string } {
  const mode = deps.runner.resumeMode?.(deps.meta.profile.protocol) ?? "none";
  const before = transcript(history);
  if (mode !== "transcript" || before === "") return { prompt: item.prompt, file: pFile };
  const prompt = `The conversation so far:\n\n${before}\n\nThe new request:\n\n${item.prompt}`;
  const file = pFile.replace(/\.txt$/, ".runner.txt");
  writeFileAtomic(file, prompt);
  return { prompt, file };
}

function runPlan(
  deps: TurnDeps,
  turnId: string,
  plan: TurnPlan,
  control: TurnControl,
  state: {
    answer: string;
    result: Extract<AgentMessage, { type: "result" }> | undefined;
    usage: Usage | undefined;
    runnerSessionId: string | undefined;
  },
): Promise<Outcome> {
  const { log, render } = deps;
  return new Promise<Outcome>((resolve) => {
    const [cmd, ...args] = plan.argv;
    // detached: the runner leads its own process group, so cancel reaches everything it started.
    // stdin is /dev/null (several CLIs wait for an open pipe's end forever), or a file the runner names.
    const stdin: number | "ignore" = plan.stdinFile ? fs.openSync(plan.stdinFile, "r") : "ignore";
    const child = spawn(cmd!, args, {
      cwd: plan.cwd,
      // PWD follows cwd: some CLIs (opencode) take their project directory from it, not from getcwd().
      env: { ...plan.env, PWD: plan.cwd },
      stdio: [stdin, "pipe", "pipe"],
      detached: true,
    });
    if (typeof stdin === "number") fs.closeSync(stdin);
    let spawnError: Error | undefined;
    let stderrTail = "";
    const pid = child.pid;
    if (pid !== undefined) log.append({ type: "runner_started", turnId, pid, argv0: cmd! });

    const onMessage = (m: AgentMessage): void => {
      switch (m.type) {
        case "text":
          state.answer += m.text;
          render.text(m.text);
          break;
        case "tool":
          log.append({
            type: "tool_activity",
            turnId,
            phase: m.phase,
            name: boundText(m.name, 200),
            summary: boundText(m.summary),
          });
          render.tool(m.phase, m.name, m.summary);
          break;
        case "usage":
          state.usage = addUsage(state.usage, m.usage);
          log.append({ type: "usage", turnId, usage: m.usage });
          break;
        case "progress":
          log.append({ type: "progress", turnId, text: boundText(m.text) });
          render.info(m.text);
          break;
        case "result":
          state.result = m;
          // The answer was usually streamed already; show it only when the agent said it only here.
          if (m.text && state.answer === "") render.text(m.text.endsWith("\n") ? m.text : `${m.text}\n`);
          break;
        case "session":
          state.runnerSessionId = m.id;
          break;
        case "raw":
          render.info(m.text);
          break;
      }
    };
    const out = new LineSplitter(MAX_RUNNER_LINE, (bytes) =>
      render.info(`(dropped a ${bytes}-byte output line)`),
    );
    const read = (line: string): AgentMessage[] =>
      plan.parser ? plan.parser.line(line) : [parseStdoutLine(plan.protocol, line)];
    child.stdout!.on("data", (chunk: Buffer) => {
      for (const line of out.push(chunk)) for (const m of read(line.toString("utf8"))) onMessage(m);
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      const s = chunk.toString("utf8");
      stderrTail = (stderrTail + s).slice(-STDERR_KEEP);
      for (const l of s.split("\n")) if (l.trim()) render.stderr(l);
    });
    child.on("error", (e) => {
      spawnError = e;
    });
    control.onStop(() => {
      if (pid !== undefined) void terminateGroup(pid);
    });
    child.on("close", (code, signal) => {
      const rest = out.flush();
      // A last line without LF: plain text gets no newline it never had.
      const unended = !plan.parser && plan.protocol === "text";
      for (const m of rest ? read(rest.toString("utf8")) : []) {
        onMessage(unended && m.type === "text" ? { type: "text", text: m.text.slice(0, -1) } : m);
      }
      for (const m of plan.parser?.end?.({ code, signal }) ?? []) onMessage(m);
      // The turn is over: nothing it started may outlive it.
      if (pid !== undefined) signalGroup(pid, "SIGKILL");
      control.beforeDecide?.();
      const result = control.explicit ? { type: "result" as const, ...control.explicit } : state.result;
      resolve(decide(control, spawnError, result, code, signal, stderrTail, cmd!));
    });
  });
}

function decide(
  control: TurnControl,
  spawnError: Error | undefined,
  result: Extract<AgentMessage, { type: "result" }> | undefined,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderrTail: string,
  cmd: string,
): Outcome {
  const base = { exitCode: code, signal };
  if (control.reason) return { ...base, ...STOP_STATUS[control.reason] };
  if (spawnError) {
    // Node reports a negated errno as the "exit code" of a process that never started.
    const missing = (spawnError as NodeJS.ErrnoException).code === "ENOENT";
    return {
      exitCode: null,
      signal: null,
      status: "errored",
      reason: missing ? `command not found: ${cmd}` : spawnError.message,
    };
  }
  if (result) {
    const firstLine =
      result.reason ?? result.text?.split("\n").find((l) => l.trim()) ?? "agent reported an error";
    if (result.status === "completed") return { ...base, status: "completed" };
    if (result.status === "exhausted") return { ...base, status: "exhausted", reason: firstLine };
    return { ...base, status: "errored", reason: firstLine };
  }
  if (code === 0) return { ...base, status: "completed" };
  const lastErr = stderrTail
    .split("\n")
    .filter((l) => l.trim())
    .pop();
  const why = signal ? `killed by ${signal}` : `exit code ${code}`;
  return { ...base, status: "errored", reason: lastErr ? `${why}: ${lastErr.trim()}` : why };
}

function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return { ...b };
  const cost = a.cost !== undefined || b.cost !== undefined ? (a.cost ?? 0) + (b.cost ?? 0) : undefined;
  return { input: a.input + b.input, output: a.output + b.output, ...(cost !== undefined ? { cost } : {}) };
}
