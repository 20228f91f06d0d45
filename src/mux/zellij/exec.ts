/** Runs the zellij client (argv arrays only, never a shell), with a timeout: a hung client must not hang muster. */
import { spawn } from "node:child_process";
import { MusterError } from "../../base/errors.js";
import { setting } from "../../base/settings/resolve.js";
import { collectRun, type MuxRun } from "../collect.js";

export type ZellijRun = MuxRun;

const DEFAULT_TIMEOUT_MS = 5_000;

/** The zellij binary: `$MUSTER_ZELLIJ_BIN` or `zellij` from PATH. */
export const zellijBin = (env: NodeJS.ProcessEnv): string => setting(env, "zellijBin");

// A server started by `attach --create-background` may copy its client's environment into every pane:
// hand it only what a client needs, never the caller's whole environment (it may hold secrets). The child
// host gets the spawning environment from its handover file (env.json).
const CLIENT_ENV =
  /^(PATH|HOME|USER|LOGNAME|SHELL|TERM|LANG|LANGUAGE|TZ|XDG_[A-Z_]+|ZELLIJ(_[A-Z_]+)?|LC_[A-Z]+)$/;

export function zellijClientEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && CLIENT_ENV.test(k)) out[k] = v;
  return out;
}

const oneLine = (s: string): string => s.replace(/\s+/g, " ").trim().slice(0, 400);

/** Runs zellij with args; resolves on any exit code, throws mux_unavailable when it cannot run or times out. */
export function runZellij(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<ZellijRun> {
  const bin = zellijBin(env);
  const child = spawn(bin, args, { env: zellijClientEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  return collectRun(child, timeoutMs, {
    start: (e) => {
      const why =
        e.code === "ENOENT"
          ? `${bin} not found (install zellij or set MUSTER_ZELLIJ_BIN)`
          : oneLine(e.message);
      return new MusterError("mux_unavailable", `cannot run zellij: ${why}`, { cause: e });
    },
    timeout: () => {
      const what = args.includes("action") ? args[args.indexOf("action") + 1] : args[0];
      return new MusterError("mux_unavailable", `zellij ${what} timed out after ${timeoutMs} ms`);
    },
  });
}

/** The mux_unavailable error for a failed call, quoting zellij's stderr on one line. */
export function zellijFailure(args: string[], run: ZellijRun): MusterError {
  const what = args.includes("action") ? args[args.indexOf("action") + 1] : args[0];
  const said = oneLine(run.stderr) || oneLine(run.stdout) || "no message";
  return new MusterError("mux_unavailable", `zellij ${what} failed (exit ${run.exitCode}): ${said}`);
}

/** Runs zellij and returns stdout; throws mux_unavailable on a non-zero exit. */
export async function zellij(args: string[], env: NodeJS.ProcessEnv, timeoutMs?: number): Promise<string> {
  const run = await runZellij(args, env, timeoutMs);
  if (run.exitCode !== 0) throw zellijFailure(args, run);
  return run.stdout;
}
