/**
 * Runs the tmux client (argv arrays only, never a shell). node:child_process rather than execa on
 * this path: importing execa costs ~150 ms here, paid by every CLI call and child spawn.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { MusterError } from "../../base/errors.js";
import { setting } from "../../base/settings/resolve.js";
import { collectRun, type MuxRun } from "../collect.js";
import { type ServerRef, serverArgs } from "./argv.js";

export type TmuxRun = MuxRun;

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
}

const O_CLOEXEC = 0o2000000;

/**
 * stdio entries (from index 3) that point every descriptor this process would pass to a child — one it
 * inherited without close-on-exec, e.g. a pipe of whoever started `muster mcp` — at /dev/null instead.
 * Linux only (/proc/self/fdinfo); elsewhere nothing is replaced.
 */
function inheritedFdStdio(devNull: number): (number | "ignore")[] {
  const leaked: number[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync("/proc/self/fdinfo");
  } catch {
    return [];
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) leaked.push(fd);
    } catch {
      // Closed while we looked (the readdir's own descriptor among them).
    }
  }
  if (leaked.length === 0) return [];
  const out: (number | "ignore")[] = Array.from({ length: Math.max(...leaked) - 2 }, () => "ignore");
  for (const fd of leaked) out[fd - 3] = devNull;
  return out;
}

const DEFAULT_TIMEOUT_MS = 5_000;

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
  const timeout = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const devNull = opts.isolate ? fs.openSync("/dev/null", "r+") : -1;
  let child: ReturnType<typeof spawn>;
  try {
    // -u: without a UTF-8 locale (none in a minimal environment) tmux prints a format's tabs as `_`.
    child = spawn(bin, ["-u", ...serverArgs(server), ...args], {
      env: tmuxClientEnv(env),
      stdio: [
        opts.input === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        ...(devNull >= 0 ? inheritedFdStdio(devNull) : []),
      ],
    });
  } finally {
    if (devNull >= 0) fs.closeSync(devNull);
  }
  const run = collectRun(child, timeout, {
    start: (e) => {
      const why =
        e.code === "ENOENT" ? `${bin} not found (install tmux or set MUSTER_TMUX_BIN)` : oneLine(e.message);
      return new MusterError("mux_unavailable", `cannot run tmux: ${why}`, { cause: e });
    },
    timeout: () => new MusterError("mux_unavailable", `tmux ${args[0]} timed out after ${timeout} ms`),
  });
  if (opts.input !== undefined) {
    child.stdin!.on("error", () => {});
    child.stdin!.end(opts.input);
  }
  return run;
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
