/**
 * A child's acceptance check: after the agent's answer, the host runs the check where the child works (its
 * worktree, host or container) and the turn is `completed` only when it exits 0. It runs as its own process
 * group, bounded in time; only the end of its output is kept.
 */
import { spawn } from "node:child_process";
import type { VerifySpec } from "../artifacts/events.js";
import { terminateGroup } from "../util/process-group.js";
import type { TurnControl } from "./turn-control.js";

// What a run keeps of its output: the end, where a test runner prints its failures and summary.
const KEEP_BYTES = 64 * 1024;
// What goes into events, the result and a corrective prompt.
export const OUTPUT_TAIL_BYTES = 4 * 1024;

/** One run of the check. */
export interface CheckRun {
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  outputTail: string;
  timedOut: boolean;
  /** The turn was stopped (cancel, interrupt) while the check ran: it was killed, not judged. */
  stopped: boolean;
}

/** Runs the check once in `cwd` with the child's environment; a stop of the turn kills it. */
export function runCheck(
  spec: VerifySpec,
  cwd: string,
  env: Record<string, string>,
  control: TurnControl,
): Promise<CheckRun> {
  const started = Date.now();
  return new Promise<CheckRun>((resolve) => {
    const [cmd, ...args] = spec.argv;
    // stdin is /dev/null: a check that waits for input would only run into its time bound.
    const proc = spawn(cmd!, args, {
      cwd,
      env: { ...env, PWD: cwd },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const tail = new TailBuffer(KEEP_BYTES);
    proc.stdout!.on("data", (b: Buffer) => tail.push(b));
    proc.stderr!.on("data", (b: Buffer) => tail.push(b));
    let timedOut = false;
    let stopped = false;
    const kill = (): void => {
      if (proc.pid !== undefined) void terminateGroup(proc.pid, 1000);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, spec.timeoutMs);
    control.onStop(() => {
      stopped = true;
      kill();
    });
    let spawnError: Error | undefined;
    proc.on("error", (e) => {
      spawnError = e;
    });
    proc.on("close", (code, signal) => {
      clearTimeout(timer);
      control.onStop(() => {});
      const said = spawnError ? `cannot run the check: ${spawnError.message}\n` : "";
      const bound = timedOut
        ? `\n[stopped after ${Math.round(spec.timeoutMs / 1000)} s, its time bound]`
        : "";
      resolve({
        exitCode: spawnError ? 127 : code,
        signal: signal ?? null,
        durationMs: Date.now() - started,
        outputTail: lastBytes(said + tail.text() + bound, OUTPUT_TAIL_BYTES),
        timedOut,
        stopped,
      });
    });
  });
}

/** Whether a run passed: exit 0, not killed. */
export const passed = (run: CheckRun): boolean => run.exitCode === 0 && !run.timedOut && !run.stopped;

/** One line on how a failed run ended. */
export function failureLine(spec: VerifySpec, run: CheckRun): string {
  if (run.timedOut) return `the check \`${spec.command}\` did not finish within ${spec.timeoutMs / 1000} s`;
  if (run.exitCode === null) return `the check \`${spec.command}\` was killed by ${run.signal}`;
  return `the check \`${spec.command}\` exited ${run.exitCode}`;
}

/** The prompt that sends a failed check back to the agent, to fix in the same turn. */
export function correctivePrompt(spec: VerifySpec, run: CheckRun, attempt: number): string {
  return [
    `muster ran this task's acceptance check after your answer, and it failed: ${failureLine(spec, run)}.`,
    "The end of its output:",
    "```",
    run.outputTail.trimEnd(),
    "```",
    `Fix what makes it fail, then answer again (correction ${attempt} of ${spec.retries}; the check runs again after your answer).`,
  ].join("\n");
}

/** The last `max` bytes of a string, cut on a character boundary. */
function lastBytes(s: string, max: number): string {
  const buf = Buffer.from(s, "utf8");
  if (buf.length <= max) return s;
  let start = buf.length - max;
  // Skip UTF-8 continuation bytes so the tail starts on a whole character.
  while (start < buf.length && (buf[start]! & 0xc0) === 0x80) start++;
  return `…${buf.subarray(start).toString("utf8")}`;
}

/** The end of a stream, at most `max` bytes kept. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly max: number) {}

  push(b: Buffer): void {
    this.chunks.push(b);
    this.size += b.length;
    while (this.size - this.chunks[0]!.length >= this.max) this.size -= this.chunks.shift()!.length;
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.max)).toString("utf8");
  }
}
