/**
 * Starting a pane's holder process (holder.ts) and handing it what to run. The holder starts first and waits
 * for its spec on stdin, so one can be started ahead of a spawn (spare-pool.ts) and handed the spec later.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { signalProcess } from "../../util/process-group.js";
import type { SpawnPaneOptions } from "../backend.js";
import { paneSocketPath } from "./socket-path.js";

// One CommonJS file (scripts/bundle.mjs): the holder is on every pty pane's start-up path.
const HOLDER_JS = path.join(PACKAGE_ROOT, "dist", "mux", "pty", "holder.cjs");
/** A fresh pane's size until a viewer brings its own (tmux's default-size is 80x24; agents print wider). */
const DEFAULT_SIZE = { cols: 120, rows: 40 };
const READY_TIMEOUT_MS = 15_000;

/** A holder process this backend started, before and while it is handed its spec. */
export interface Holder {
  id: string;
  dir: string;
  proc: ChildProcess;
  exited: boolean;
}

/** What a started holder reports: where it listens, and its program's pid. */
export interface StartedProgram {
  socket: string;
  childPid: number;
}

/**
 * A holder waiting for its spec on stdin, in folder `dir` (made here). Nothing of it keeps this process
 * alive: a spare nobody uses sees stdin close when this process exits, and leaves.
 */
export function launchHolder(id: string, dir: string): Holder {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const log = fs.openSync(path.join(dir, "holder.log"), "a", 0o600);
  let proc: ChildProcess;
  try {
    // Its own session (no terminal of ours), no environment of ours: the program's comes with the spec.
    proc = spawn(process.execPath, [HOLDER_JS, dir], {
      cwd: dir,
      detached: true,
      env: {},
      stdio: ["pipe", "pipe", log],
    });
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  } finally {
    fs.closeSync(log);
  }
  const h: Holder = { id, dir, proc, exited: false };
  proc.once("exit", () => {
    h.exited = true;
  });
  proc.once("error", () => {
    h.exited = true;
  });
  proc.stdin?.on("error", () => undefined);
  proc.unref();
  (proc.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  (proc.stdout as unknown as { unref?: () => void } | null)?.unref?.();
  return h;
}

/** Hands the spec to holder `h` and waits for its socket; on failure the holder and its folder go. */
export async function startProgram(
  h: Holder,
  opts: SpawnPaneOptions,
  env: NodeJS.ProcessEnv,
): Promise<StartedProgram> {
  try {
    const socket = paneSocketPath(h.dir, h.id, env);
    const spec = {
      argv: opts.argv,
      cwd: opts.cwd,
      env: paneEnv(env, opts.env),
      ...DEFAULT_SIZE,
      socket,
    };
    const ready = readReady(h.proc, h.dir);
    h.proc.stdin?.end(`${JSON.stringify(spec)}\n`);
    return { socket, childPid: await ready };
  } catch (e) {
    if (h.proc.pid) signalProcess(h.proc.pid, "SIGKILL");
    fs.rmSync(h.dir, { recursive: true, force: true });
    throw e instanceof MusterError
      ? e
      : new MusterError("mux_unavailable", `pty: cannot start a pane: ${(e as Error).message}`, {
          cause: e,
        });
  }
}

/** The pane's environment: the caller's plus the pane's own, without the caller's multiplexer. */
function paneEnv(env: NodeJS.ProcessEnv, extra: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...env, ...extra })) if (typeof v === "string") out[k] = v;
  // A pane here is not a pane of the caller's tmux: its own children must not think so.
  delete out.TMUX;
  delete out.TMUX_PANE;
  return out;
}

/** The holder's ready line ({childPid}), or why it never came (its log says what went wrong). */
function readReady(holder: ChildProcess, dir: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let out = "";
    let timer: NodeJS.Timeout | undefined;
    const stop = () => {
      clearTimeout(timer);
      holder.off("exit", onExit);
      holder.off("error", onError);
      holder.stdout?.off("data", onData);
    };
    const fail = (why: string) => {
      stop();
      let log = "";
      try {
        log = fs.readFileSync(path.join(dir, "holder.log"), "utf8").trim().split("\n").slice(-3).join(" / ");
      } catch {}
      reject(new MusterError("mux_unavailable", `pty: the pane's holder ${why}${log ? `: ${log}` : ""}`));
    };
    const onExit = (code: number | null, sig: NodeJS.Signals | null) =>
      fail(`exited at once (${sig ?? `exit code ${code}`})`);
    const onError = (e: Error) => fail(`could not run (${e.message})`);
    const onData = (d: Buffer) => {
      out += d.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl < 0) return;
      stop();
      holder.stdout?.destroy();
      let pid = Number.NaN;
      try {
        pid = Number((JSON.parse(out.slice(0, nl)) as { childPid?: unknown }).childPid);
      } catch {}
      if (Number.isInteger(pid) && pid > 0) resolve(pid);
      else fail("sent no program pid");
    };
    // A holder that waited as a spare may have been gone since: its exit was seen already.
    if (holder.exitCode !== null || holder.signalCode !== null) return fail("had exited");
    timer = setTimeout(() => fail(`did not start within ${READY_TIMEOUT_MS / 1000}s`), READY_TIMEOUT_MS);
    holder.once("exit", onExit);
    holder.once("error", onError);
    holder.stdout?.on("data", onData);
  });
}
