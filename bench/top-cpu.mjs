#!/usr/bin/env node
// "top CPU": the `muster top` process, drawn in a real tmux pane (its own private server), over 64 children
// sitting idle, then over 64 children working (a tool start or end every second each: 64 events/s in all).
// CPU from /proc/<pid>/stat (user + system) over a window after a warm-up. Idle is measured in the steady
// state: 30 s after start (past V8's one-off heap shrink ~20-25 s after start, a full GC of 50-65 ms here that
// made a 20 s window read 0.35 or 0.55 % depending on whether it fell inside), over a window three times as
// long as the working one, so it holds the watcher's 2 s ticks and the idle clock's redraws. Part of
// `npm run bench`; run alone:
// `node bench/top-cpu.mjs [seconds]` (after a build).
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { benchEnv, startReaper } from "./env.mjs";
import { round } from "./stats.mjs";

const BIN = path.join(import.meta.dirname, "..", "bin", "muster.js");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TICK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** user + system CPU of a process, in ms. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
}

const tmux = (socket, args) =>
  spawnSync("tmux", ["-L", socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] })
    .stdout ?? "";

/** Opens top on `m`'s workspace in a tmux pane, waits for it to show `n` children, measures `seconds`. */
async function measure(m, env, n, seconds, warmupMs) {
  const ui = `mbt-${process.pid}-${n}-${Date.now() % 10000}`;
  const vars = ["MUSTER_HOME", "MUSTER_TMUX_SOCKET", "MUSTER_MAX_RUNNING"].map((k) => `${k}=${env[k]}`);
  const argv = ["env", "-u", "TMUX", "-u", "TMUX_PANE", ...vars, process.execPath, BIN, "top"];
  tmux(ui, ["new-session", "-d", "-s", "top", "-x", "120", "-y", "40", "-c", m.cwd, "--", ...argv]);
  try {
    const pid = Number(tmux(ui, ["display-message", "-p", "-t", "top", "#{pane_pid}"]).trim());
    const deadline = Date.now() + 60_000;
    while (!tmux(ui, ["capture-pane", "-p", "-t", "top"]).includes(`${n} children`)) {
      if (Date.now() > deadline) throw new Error(`top did not show ${n} children`);
      await sleep(200);
    }
    await sleep(warmupMs); // past start-up compilation and the first GCs
    const c0 = cpuMs(pid);
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const used = cpuMs(pid) - c0;
    const wall = performance.now() - t0;
    const screen = tmux(ui, ["capture-pane", "-p", "-t", "top"]);
    tmux(ui, ["send-keys", "-t", "top", "q"]);
    return {
      children: n,
      windowMs: Math.round(wall),
      cpuMs: round(used),
      percentOfOneCore: round((used / wall) * 100, 2),
      footer: screen.split("\n").find((l) => l.includes(" children, ")) ?? null,
    };
  } finally {
    await sleep(300);
    tmux(ui, ["kill-server"]);
  }
}

/** top's CPU over 64 idle children, then over 64 working ones. */
export async function topCpu(muster, env, seconds = 20, n = 64) {
  const idle = muster("top-idle");
  const ids = [];
  for (let i = 0; i < n; i++) ids.push((await idle.spawn({ agent: "mock", prompt: "mock: reply=idle" })).id);
  await idle.wait(ids, { mode: "all", timeoutMs: 180_000 });
  const idleRun = await measure(idle, env, n, seconds * 3, 30_000);
  await idle.cancelTree(undefined, { graceMs: 2000 });

  const busy = muster("top-active");
  // One tool start or end a second per child for 10 minutes: the window falls well inside it.
  for (let i = 0; i < n; i++) await busy.spawn({ agent: "mock", prompt: "mock: sleep=600 tools=300\nbusy" });
  const activeRun = await measure(busy, env, n, seconds, 3000);
  // The core watcher top is built on, alone over the same children: what top adds is the difference.
  const watcherOnly = JSON.parse(
    execFileSync(process.execPath, [path.join(import.meta.dirname, "idle-watcher.mjs"), String(seconds)], {
      cwd: busy.cwd,
      env,
      encoding: "utf8",
    }),
  );
  await busy.cancelTree(undefined, { graceMs: 2000 });
  return {
    idle: idleRun,
    active: activeRun,
    coreWatcherAloneActive: { percentOfOneCore: watcherOnly.percentOfOneCore, cpuMs: watcherOnly.cpuMs },
    target: { idlePercent: 0.5, activePercent: 2 },
  };
}

export const topCpuRow = (r) => [
  `muster top CPU, ${r.idle.children} children idle · working (${r.idle.windowMs / 1000} s)`,
  `${r.idle.percentOfOneCore} % · ${r.active.percentOfOneCore} % of one core (the core watcher alone: ${r.coreWatcherAloneActive.percentOfOneCore} %)`,
  "≤ 0.5 % · ≤ 2 %",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-top-"));
  const socket = `mbtk-${process.pid}`;
  startReaper(base, [socket, `mbt-${process.pid}-*`]);
  const env = benchEnv(base, socket);
  const muster = (name) => {
    const cwd = path.join(base, name);
    fs.mkdirSync(cwd, { recursive: true });
    return createMuster({ env, cwd });
  };
  try {
    const r = await topCpu(muster, env, Number(process.argv[2] ?? 20));
    const [name, result, target] = topCpuRow(r);
    console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    await sleep(1000);
    fs.rmSync(base, { recursive: true, force: true });
  }
}
