/** Runs the zellij client (argv arrays only, never a shell), with a timeout: a hung client must not hang muster. */
import { MusterError } from "../../base/errors.js";
import { setting } from "../../base/settings/resolve.js";
import { localPlace } from "../../place/local/index.js";
import { ExecFailure, type ExecRun, type Place } from "../../place/place.js";

export type ZellijRun = ExecRun;

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
/** Where and how the zellij client runs: the caller's environment (its binary, its session) and the place. */
export interface ZellijClient {
  env: NodeJS.ProcessEnv;
  place?: Place;
}

export async function runZellij(
  args: string[],
  { env, place = localPlace }: ZellijClient,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<ZellijRun> {
  const bin = zellijBin(env);
  try {
    return await place.exec([bin, ...args], { env: zellijClientEnv(env), timeoutMs });
  } catch (e) {
    if (!(e instanceof ExecFailure)) throw e;
    if (e.kind === "timeout") {
      const what = args.includes("action") ? args[args.indexOf("action") + 1] : args[0];
      throw new MusterError("mux_unavailable", `zellij ${what} timed out after ${timeoutMs} ms`, {
        cause: e,
      });
    }
    const why =
      e.errno?.code === "ENOENT"
        ? `${bin} not found (install zellij or set MUSTER_ZELLIJ_BIN)`
        : oneLine(e.message);
    throw new MusterError("mux_unavailable", `cannot run zellij: ${why}`, { cause: e });
  }
}

/** The mux_unavailable error for a failed call, quoting zellij's stderr on one line. */
export function zellijFailure(args: string[], run: ZellijRun): MusterError {
  const what = args.includes("action") ? args[args.indexOf("action") + 1] : args[0];
  const said = oneLine(run.stderr) || oneLine(run.stdout) || "no message";
  return new MusterError("mux_unavailable", `zellij ${what} failed (exit ${run.exitCode}): ${said}`);
}

/** Runs zellij and returns stdout; throws mux_unavailable on a non-zero exit. */
export async function zellij(args: string[], client: ZellijClient, timeoutMs?: number): Promise<string> {
  const run = await runZellij(args, client, timeoutMs);
  if (run.exitCode !== 0) throw zellijFailure(args, run);
  return run.stdout;
}
