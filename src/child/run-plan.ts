import { spawn } from "node:child_process";
import * as fs from "node:fs";
import type { CompletionStatus, ProviderError } from "../artifacts/events.js";
import { droppedLineNote, LineSplitter } from "../artifacts/lines.js";
import type { EventLog } from "../artifacts/log.js";
import { parseStdoutLine } from "../runners/protocol.js";
import type { AgentMessage, TurnPlan } from "../runners/types.js";
import { lowestPriority, signalGroup, terminateGroup } from "../util/process-group.js";
import { firstLine, type ResultMessage, type TurnState, turnMessages } from "./messages.js";
import type { PaneRenderer } from "./render.js";
import type { StopReason, TurnControl } from "./turn-control.js";

export type { ResultMessage, TurnState } from "./messages.js";

// A runner line bigger than this is not protocol; it is dropped and noted.
const MAX_RUNNER_LINE = 16 * 1024 * 1024;
const STDERR_KEEP = 2048;
// After the turn settled on the runner's final record, the process has this long to exit on its own.
const REAP_GRACE_MS = 2000;

/** How the runner's process ended, when it ended after its turn had settled. */
export interface RunnerExit {
  pid: number;
  code: number | null;
  signal: string | null;
  /** Killed by muster after the grace period, not exited on its own. */
  killed: boolean;
}

/** The runner's process after its turn settled: it exits on its own within the grace period, or is killed. */
export interface Reap {
  /** Resolves once the process group is gone: with its exit when the turn settled before it. */
  done: Promise<RunnerExit | undefined>;
  /** Kills the group now (the host is closing). */
  kill(): void;
}

const NOTHING_TO_REAP: Reap = { done: Promise.resolve(undefined), kill: () => {} };

// Process groups of runners not yet reaped: a host that has to stop on an error takes them with it.
const liveGroups = new Set<number>();

/** Kills every runner group this host started and has not reaped (the host is about to exit). */
export function killLiveRunners(): void {
  for (const pgid of liveGroups) signalGroup(pgid, "SIGKILL");
}

export interface Outcome {
  status: CompletionStatus;
  reason?: string;
  exitCode: number | null;
  signal: string | null;
  /** The agent's stderr when it failed before its turn could start (a session that did not open). */
  stderr?: string;
  /** The provider error the turn failed on, as the runner classified it. */
  providerError?: ProviderError;
  /** The agent's process died mid-turn (a signal, or a live session's process gone) with no answer given. */
  died?: boolean;
}

export const STOP_STATUS: Record<StopReason, { status: CompletionStatus; reason: string }> = {
  cancelled: { status: "cancelled", reason: "cancelled by muster cancel" },
  interrupted: { status: "cancelled", reason: "interrupted in the pane (Ctrl-C)" },
  lost: { status: "lost", reason: "the pane was closed while the turn ran" },
  steered: { status: "interrupted", reason: "interrupted by a follow-up (send --mode now)" },
  stopped: { status: "interrupted", reason: "stopped by the parent (send --mode stop)" },
  exhausted: { status: "exhausted", reason: "cap reached" },
};

/** How a stopped turn settles: a cap names itself. */
const stopped = (control: TurnControl): { status: CompletionStatus; reason: string } => {
  const s = STOP_STATUS[control.reason!];
  return control.reason === "exhausted" && control.capReason ? { ...s, reason: control.capReason } : s;
};

/** The turn's result once its runner is done: late `muster done|error` requests are in, and win over the runner's. */
export function finalResult(control: TurnControl, state: TurnState): ResultMessage | undefined {
  control.beforeDecide?.();
  return control.explicit ? { type: "result", ...control.explicit } : state.result;
}

/**
 * How a turn of a process that lives on (a session's driver, a CLI's TUI) ended: with no answer and no
 * stop or failure recorded it errored (`noAnswer` says why); otherwise as `decide` says.
 */
export function decideLiveTurn(
  control: TurnControl,
  state: TurnState,
  stderrTail: string,
  cmd: string,
  noAnswer = "the agent ended the turn without an answer",
): Outcome {
  const result = finalResult(control, state);
  if (!result && !control.reason && !control.failure)
    return { status: "errored", reason: noAnswer, exitCode: null, signal: null };
  return decide(control, undefined, result, null, null, stderrTail, cmd);
}

/** Runs the runner's process to its end, turning its stdout into events, pane lines and the answer. */
export function runPlan(
  deps: { log: EventLog; render: PaneRenderer },
  turnId: string,
  plan: TurnPlan,
  control: TurnControl,
  state: TurnState,
): Promise<{ outcome: Outcome; reap: Reap }> {
  const { log, render } = deps;
  // Checked first: spawn would report a missing cwd as ENOENT, indistinguishable from a missing command.
  const gone = missingDir(plan.cwd);
  if (gone)
    return Promise.resolve({
      outcome: { status: "errored", reason: gone, exitCode: null, signal: null },
      reap: NOTHING_TO_REAP,
    });
  return new Promise<{ outcome: Outcome; reap: Reap }>((resolveRun) => {
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
    if (pid !== undefined) liveGroups.add(pid);
    control.onStop(() => {
      if (pid !== undefined) void terminateGroup(pid);
    });
    // A record that cannot be written (a full disk) stops the turn; it settles errored, saying why.
    const guarded = (fn: () => void): void => {
      if (control.failure) return;
      try {
        fn();
      } catch (e) {
        control.fail(e as Error);
      }
    };
    if (pid !== undefined) guarded(() => log.append({ type: "runner_started", turnId, pid, argv0: cmd! }));

    // The turn settles once: on the runner's final record (runners whose session is on disk by then), else
    // on exit. A process still running after it settled is reaped in the background.
    let settled = false;
    let exited: ((exit: RunnerExit | undefined) => void) | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let killedAfterGrace = false;
    const killGroup = (): void => {
      if (pid === undefined) return;
      signalGroup(pid, "SIGKILL");
      liveGroups.delete(pid);
    };
    const settle = (outcome: Outcome, running: boolean): void => {
      settled = true;
      if (!running) {
        resolveRun({ outcome, reap: NOTHING_TO_REAP });
        return;
      }
      const done = new Promise<RunnerExit | undefined>((r) => {
        exited = r;
      });
      // Past its final record the process only winds down (a Node CLI's exit is milliseconds of CPU): where nice
      // applies, that waits behind the hosts still recording turns and the parent reading them.
      if (pid !== undefined) lowestPriority(pid);
      graceTimer = setTimeout(() => {
        killedAfterGrace = true;
        killGroup();
        // A process that does not go even then (stuck in the kernel) is not waited for forever.
        graceTimer = setTimeout(() => reaped(null, "SIGKILL"), REAP_GRACE_MS);
      }, REAP_GRACE_MS);
      resolveRun({ outcome, reap: { done, kill: killGroup } });
    };
    // After the turn settled: the process has exited (or is given up on); whatever it started goes with it.
    const reaped = (code: number | null, signal: string | null): void => {
      clearTimeout(graceTimer);
      killGroup();
      exited?.(pid === undefined ? undefined : { pid, code, signal, killed: killedAfterGrace });
      exited = undefined;
    };

    const record = turnMessages(deps, turnId, state, () => {
      if (plan.settleOnResult && !control.reason && !control.failure) {
        settle(decide(control, undefined, finalResult(control, state), null, null, stderrTail, cmd!), true);
      }
    });
    // The host's caps see every message once it is recorded.
    const onMessage = (m: AgentMessage): void => {
      record(m);
      control.onMessage?.(m);
    };
    const out = new LineSplitter(MAX_RUNNER_LINE, (bytes) => {
      render.info(`(dropped a ${bytes}-byte output line)`);
      deps.log.append({ type: "progress", turnId, text: droppedLineNote(bytes, MAX_RUNNER_LINE) });
    });
    const read = (line: string): AgentMessage[] =>
      plan.parser ? plan.parser.line(line) : [parseStdoutLine(plan.protocol, line)];
    child.stdout!.on("data", (chunk: Buffer) => {
      // After the turn settled, what the process still writes is read (so it never blocks) and dropped.
      for (const line of out.push(chunk)) {
        if (settled) break;
        guarded(() => {
          for (const m of read(line.toString("utf8"))) if (!settled) onMessage(m);
        });
      }
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      if (settled) return;
      const s = chunk.toString("utf8");
      stderrTail = (stderrTail + s).slice(-STDERR_KEEP);
      for (const l of s.split("\n")) if (l.trim()) render.stderr(l);
    });
    child.on("error", (e) => {
      spawnError = e;
    });
    // Once settled, exit is enough: a descendant that escaped the group may hold stdout open ('close' waits).
    child.on("exit", (code, signal) => {
      if (settled) reaped(code, signal);
    });
    child.on("close", (code, signal) => {
      if (settled) return reaped(code, signal);
      const rest = out.flush();
      // A last line without LF: plain text gets no newline it never had.
      const unended = !plan.parser && plan.protocol === "text";
      guarded(() => {
        for (const m of rest ? read(rest.toString("utf8")) : []) {
          onMessage(unended && m.type === "text" ? { type: "text", text: m.text.slice(0, -1) } : m);
        }
        for (const m of plan.parser?.end?.({ code, signal }) ?? []) onMessage(m);
      });
      // The turn is over: nothing it started may outlive it.
      killGroup();
      settle(decide(control, spawnError, finalResult(control, state), code, signal, stderrTail, cmd!), false);
    });
  });
}

export function decide(
  control: TurnControl,
  spawnError: Error | undefined,
  result: ResultMessage | undefined,
  code: number | null,
  signal: NodeJS.Signals | null,
  stderrTail: string,
  cmd: string,
): Outcome {
  const base = { exitCode: code, signal };
  if (control.reason) return { ...base, ...stopped(control) };
  if (control.failure) return { ...base, status: "errored", reason: control.failure.message };
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
    const why = result.reason ?? ((result.text ? firstLine(result.text) : "") || "agent reported an error");
    // A completed turn's reason is a note on it (a refused tool the agent stopped at), not a failure.
    if (result.status === "completed")
      return { ...base, status: "completed", ...(result.reason ? { reason: result.reason } : {}) };
    if (result.status === "exhausted") return { ...base, status: "exhausted", reason: why };
    return {
      ...base,
      status: "errored",
      reason: why,
      ...(result.providerError ? { providerError: result.providerError } : {}),
    };
  }
  if (code === 0) return { ...base, status: "completed" };
  const lastErr = stderrTail
    .split("\n")
    .filter((l) => l.trim())
    .pop();
  const why = signal ? `killed by ${signal}` : `exit code ${code}`;
  return {
    ...base,
    status: "errored",
    reason: lastErr ? `${why}: ${lastErr.trim()}` : why,
    ...(signal ? { died: true } : {}),
  };
}

/** Why `dir` cannot be a working directory, or undefined when it can. */
export function missingDir(dir: string): string | undefined {
  try {
    if (fs.statSync(dir).isDirectory()) return undefined;
    return `working directory ${dir} is not a directory`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return `working directory ${dir} no longer exists`;
    return `working directory ${dir} is not usable: ${(e as Error).message}`;
  }
}

/** The outcome of a turn stopped before its runner started. */
export function outcomeWithoutRunner(control: TurnControl, failure: Error): Outcome {
  if (control.reason) return { exitCode: null, signal: null, ...stopped(control) };
  return { exitCode: null, signal: null, status: "errored", reason: failure.message };
}
