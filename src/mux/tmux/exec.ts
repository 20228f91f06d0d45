/** Runs the tmux client (argv arrays only, never a shell) through the place tmux runs in. */
import { MusterError } from "../../base/errors.js";
import { setting } from "../../base/settings/resolve.js";
import { localPlace } from "../../place/local/index.js";
import { ExecFailure, type ExecRun, type Place } from "../../place/place.js";
import { Gate } from "../../util/gate.js";
import { type ServerRef, serverArgs } from "./argv.js";

export type TmuxRun = ExecRun;

export interface TmuxExecOptions {
  /** Written to tmux's stdin (load-buffer -). */
  input?: string;
  /** Source of MUSTER_TMUX_BIN, TMUX and TMUX_PANE; the rest of the client's env: tmuxClientEnv. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /**
   * For a call that may start the tmux server: the server keeps every descriptor its first client
   * inherited, for its whole life, so hand tmux none of ours beyond stdio (see inheritedFdStdio).
   */
  isolate?: boolean;
  /** Where the tmux client runs (this machine unless the backend was made for another place). */
  place?: Place;
  /**
   * A command that stays until something outside it ends it (display-popup waits for a person): it is not
   * made to wait behind, nor counted among, the server's short commands.
   */
  held?: boolean;
}

const DEFAULT_TIMEOUT_MS = 5_000;
// A client at another place (an SSH host, a container, a Pod) pays its transport (`ssh`, `<engine> exec`, the
// API's exec) inside the same bound, and that transport slows most on a loaded machine.
const FAR_TIMEOUT_MS = 15_000;

/**
 * Short tmux commands in flight per server from this process. The server runs commands one at a time; a
 * burst of clients (a 64-step workflow spawning at once) only makes each wait longer inside its own
 * timeout, on a machine already busy starting those children. Queued here, a command's clock starts when
 * it runs, and the burst costs what it costs in total instead of failing its tail.
 */
const CLIENTS_PER_SERVER = 4;
const gates = new WeakMap<Place, Map<string, Gate>>();

function gateFor(place: Place, server: ServerRef): Gate {
  const byServer = gates.get(place) ?? new Map<string, Gate>();
  gates.set(place, byServer);
  const key = serverArgs(server).join("\0");
  const gate = byServer.get(key) ?? new Gate(CLIENTS_PER_SERVER);
  byServer.set(key, gate);
  return gate;
}

/** The tmux binary: `$MUSTER_TMUX_BIN` or `tmux` from PATH. */
export function tmuxBin(env: NodeJS.ProcessEnv = process.env): string {
  return setting(env, "tmuxBin");
}

const oneLine = (s: string | undefined): string => (s ?? "").replace(/\s+/g, " ").trim().slice(0, 400);

// What a tmux client needs, and all a server it starts may copy into its global environment (every
// pane's environment): never the caller's whole environment, which may hold secrets. A child host
// needs only PATH to start; it gets the spawning environment from its handover file (env.json).
const CLIENT_ENV = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "TERM",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TMUX_TMPDIR",
];

/**
 * The tmux client's environment: the few variables above and the locale (LC_*) from this process, and
 * TMUX/TMUX_PANE — how the server finds the calling client — from the backend's env only.
 */
export function tmuxClientEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && (CLIENT_ENV.includes(k) || k.startsWith("LC_"))) out[k] = v;
  }
  if (env.TMUX) out.TMUX = env.TMUX;
  if (env.TMUX_PANE) out.TMUX_PANE = env.TMUX_PANE;
  return out;
}

/** Runs tmux with server flags + args; resolves on any exit code, throws mux_unavailable if tmux cannot run. */
export async function runTmux(
  server: ServerRef,
  args: string[],
  opts: TmuxExecOptions = {},
): Promise<TmuxRun> {
  const env = opts.env ?? process.env;
  const bin = tmuxBin(env);
  const place = opts.place ?? localPlace;
  const timeout = opts.timeoutMs ?? (place === localPlace ? DEFAULT_TIMEOUT_MS : FAR_TIMEOUT_MS);
  const gate = opts.held ? undefined : gateFor(place, server);
  const call = async () => {
    try {
      // -u: without a UTF-8 locale (none in a minimal environment) tmux prints a format's tabs as `_`.
      return await place.exec([bin, "-u", ...serverArgs(server), ...args], {
        env: tmuxClientEnv(env),
        timeoutMs: timeout,
        ...(opts.input !== undefined ? { input: opts.input } : {}),
        ...(opts.isolate ? { isolate: true } : {}),
      });
    } catch (e) {
      throw tmuxExecError(e, args, bin, timeout, gate);
    }
  };
  return gate ? gate.run(call) : call();
}

/** What a tmux client that could not run, or did not end in time, is reported as. */
function tmuxExecError(e: unknown, args: string[], bin: string, timeout: number, gate?: Gate): unknown {
  if (!(e instanceof ExecFailure)) return e;
  if (e.kind === "timeout") {
    const said = `tmux ${args[0]} timed out after ${timeout} ms`;
    // A server that did not answer one command in time would keep those queued behind it waiting in turn
    // (failed here, before this command's slot passes to the next).
    gate?.failWaiting(new MusterError("mux_unavailable", `not sent: ${said} on the same server`));
    return new MusterError("mux_unavailable", said, { cause: e });
  }
  const why =
    e.errno?.code === "ENOENT"
      ? `${bin} not found (install tmux or set MUSTER_TMUX_BIN)`
      : oneLine(e.message);
  return new MusterError("mux_unavailable", `cannot run tmux: ${why}`, { cause: e });
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
