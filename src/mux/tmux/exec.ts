/**
 * Runs the tmux client (argv arrays only, never a shell). node:child_process rather than execa on
 * this path: importing execa costs ~150 ms here, paid by every CLI call and child spawn.
 */
import { spawn } from "node:child_process";
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
  // The server finds the calling client from TMUX/TMUX_PANE: take them from the backend's env only.
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.TMUX;
  delete childEnv.TMUX_PANE;
  if (env.TMUX) childEnv.TMUX = env.TMUX;
  if (env.TMUX_PANE) childEnv.TMUX_PANE = env.TMUX_PANE;
  return new Promise<TmuxRun>((resolve, reject) => {
    // -u: tmux writes UTF-8 and keeps tabs whatever the locale (without it, an environment with no
    // UTF-8 locale turns each tab of a -F format into "_", so no field of its answers can be read).
    const child = spawn(bin, ["-u", ...serverArgs(server), ...args], {
      env: childEnv,
      stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeout);
    child.stdout!.on("data", (b: Buffer) => out.push(b));
    child.stderr!.on("data", (b: Buffer) => err.push(b));
    if (opts.input !== undefined) {
      child.stdin!.on("error", () => {});
      child.stdin!.end(opts.input);
    }
    child.on("error", (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why =
        e.code === "ENOENT" ? `${bin} not found (install tmux or set MUSTER_TMUX_BIN)` : oneLine(e.message);
      reject(new MusterError("mux_unavailable", `cannot run tmux: ${why}`, { cause: e }));
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (timedOut) {
        reject(new MusterError("mux_unavailable", `tmux ${args[0]} timed out after ${timeout} ms`));
        return;
      }
      resolve({
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        exitCode: code ?? 1,
      });
    });
  });
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
