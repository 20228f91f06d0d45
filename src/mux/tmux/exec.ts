/** Runs the tmux client with execa (argv arrays only, never a shell). */
import { execa } from "execa";
import { MusterError } from "../../core/errors.js";
import { type ServerRef, serverArgs } from "./argv.js";

export interface TmuxRun {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface TmuxExecOptions {
  /** Written to tmux's stdin (load-buffer -). */
  input?: string;
  /** Source of MUSTER_TMUX_BIN, TMUX and TMUX_PANE; the rest of the child's env is process.env. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** The tmux binary: `$MUSTER_TMUX_BIN` or `tmux` from PATH. */
export function tmuxBin(env: NodeJS.ProcessEnv = process.env): string {
  return env.MUSTER_TMUX_BIN || "tmux";
}

const oneLine = (s: string | undefined): string => (s ?? "").replace(/\s+/g, " ").trim().slice(0, 400);

/** Runs tmux with server flags + args; resolves on any exit code, throws mux_unavailable if tmux cannot run. */
export async function runTmux(
  server: ServerRef,
  args: string[],
  opts: TmuxExecOptions = {},
): Promise<TmuxRun> {
  const env = opts.env ?? process.env;
  const bin = tmuxBin(env);
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const r = await execa(bin, [...serverArgs(server), ...args], {
    reject: false,
    timeout,
    maxBuffer: 16 * 1024 * 1024,
    // The server finds the calling client from TMUX/TMUX_PANE; undefined drops an inherited value.
    env: { TMUX: env.TMUX, TMUX_PANE: env.TMUX_PANE },
    ...(opts.input === undefined ? { stdin: "ignore" as const } : { input: opts.input }),
  });
  if (r.timedOut) {
    throw new MusterError("mux_unavailable", `tmux ${args[0]} timed out after ${timeout} ms`);
  }
  if (r.exitCode === undefined) {
    const why =
      r.code === "ENOENT" ? `${bin} not found (install tmux or set MUSTER_TMUX_BIN)` : oneLine(r.message);
    throw new MusterError("mux_unavailable", `cannot run tmux: ${why}`, { cause: r });
  }
  return { stdout: String(r.stdout ?? ""), stderr: String(r.stderr ?? ""), exitCode: r.exitCode };
}

/** The mux_unavailable error for a failed tmux call, quoting tmux's stderr on one line. */
export function tmuxFailure(args: string[], run: TmuxRun): MusterError {
  const said = oneLine(run.stderr) || "no message";
  return new MusterError("mux_unavailable", `tmux ${args[0]} failed (exit ${run.exitCode}): ${said}`);
}

/** Runs tmux and returns its stdout; throws mux_unavailable (with tmux's stderr) on a non-zero exit. */
export async function tmux(server: ServerRef, args: string[], opts: TmuxExecOptions = {}): Promise<string> {
  const run = await runTmux(server, args, opts);
  if (run.exitCode !== 0) throw tmuxFailure(args, run);
  return run.stdout;
}
