// The environment every benchmark runs muster in: its own state root and private tmux server, and no
// lineage inherited from a pane it might be started from.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cliBinDir } from "../scripts/pinned-clis.mjs";
import { prepareCli } from "../test/fixtures/cli-setup.mjs";

/** `env` without the lineage a pane it may be started from would hand it (tmux client, primary, parent child). */
export function withoutLineage(env) {
  for (const k of [
    "TMUX",
    "TMUX_PANE",
    "MUSTER_PRIMARY",
    "MUSTER_CHILD_ID",
    "MUSTER_ARTIFACT_DIR",
    "MUSTER_DEPTH",
  ])
    delete env[k];
  return env;
}

/** The run-slot bound (default 4) is lifted: benchmarks measure delivery and scheduling, not the bound. */
export function benchEnv(base, socket) {
  return withoutLineage({
    ...process.env,
    MUSTER_HOME: path.join(base, "home"),
    MUSTER_TMUX_SOCKET: socket,
    MUSTER_MAX_RUNNING: "100",
  });
}

/**
 * A real agent CLI pointed at the scripted endpoint `url`, in a throwaway HOME and working folder under `dir`
 * (the user's own config untouched), on the benchmark's state root and private tmux server.
 */
export function cliBenchEnv(name, url, dir, base, socket) {
  const home = path.join(dir, "home");
  const cwd = path.join(dir, "work");
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  const env = {
    ...process.env,
    ...prepareCli(name, url, home),
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    TMPDIR: cwd,
    PATH: `${cliBinDir(name)}${path.delimiter}${process.env.PATH}`,
    MUSTER_HOME: path.join(base, "state"),
    MUSTER_TMUX_SOCKET: socket,
  };
  for (const k of ["TMUX", "TMUX_PANE", "MUSTER_PRIMARY", "MUSTER_CHILD_ID", "MUSTER_DEPTH"]) delete env[k];
  return { env, cwd };
}

/**
 * Makes sure a benchmark leaves nothing behind however it ends (a timeout's SIGTERM, Ctrl-C, SIGKILL): a detached
 * reaper holds the other end of a pipe and, once it closes, kills the private tmux servers `sockets` (`name*`: every one beginning so), every process
 * mentioning `base`, and removes `base`.
 */
export function startReaper(base, sockets) {
  exitOnSignals();
  const reaper = spawn(process.execPath, [path.join(import.meta.dirname, "reaper.mjs"), base, ...sockets], {
    detached: true,
    stdio: ["pipe", "ignore", "ignore"],
  });
  reaper.unref();
  reaper.stdin.unref?.();
  reaper.stdin.on("error", () => {});
  return reaper;
}

let signalsHandled = false;

/**
 * Ends the benchmark on SIGINT, SIGTERM or SIGHUP, its reapers doing the clean-up. Without a handler of its own
 * the signal can be swallowed: proper-lockfile (signal-exit 3) and another module (signal-exit 4) each catch it
 * while a lock is held, and each re-raises it only when its own handlers are the only ones there.
 */
function exitOnSignals() {
  if (signalsHandled) return;
  signalsHandled = true;
  for (const [sig, n] of [
    ["SIGINT", 2],
    ["SIGTERM", 15],
    ["SIGHUP", 1],
  ])
    process.on(sig, () => process.exit(128 + n));
}

/**
 * Kills the private tmux server `socket` and waits until its process is gone: a server ending ~130 panes
 * takes seconds on a loaded machine, and a client reaching it meanwhile is told "server exited unexpectedly".
 */
export async function killServer(socket, { under, timeoutMs = 30_000 } = {}) {
  const asked = spawnSync("tmux", ["-L", socket, "display-message", "-p", "#{pid}"], { encoding: "utf8" });
  const pid = Number(asked.stdout?.trim());
  spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  const running = () => {
    if (Number.isInteger(pid) && pid > 0)
      try {
        process.kill(pid, 0);
        return `its server (pid ${pid})`;
      } catch {}
    // The child hosts its panes ran (their command lines name their artifact dirs under `under`).
    if (under && spawnSync("pgrep", ["-f", `dist/child/host.* ${under}`]).status === 0) return "child hosts";
    return undefined;
  };
  const deadline = Date.now() + timeoutMs;
  for (let left = running(); left; left = running()) {
    if (Date.now() > deadline)
      throw new Error(`tmux ${socket}: ${left} still running ${timeoutMs} ms after kill-server`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
