#!/usr/bin/env node
// A benchmark's clean-up that outlives it: started detached with a pipe on stdin, it waits for that pipe to
// close (the benchmark ended: finished, SIGTERM, SIGINT, even SIGKILL), then kills the benchmark's private tmux
// server, ends every process that still mentions its temp dir (child hosts, their agents, pty holders) and
// removes the dir. Usage (from startReaper in env.mjs): node bench/reaper.mjs <base> <tmux-socket>…, where a
// socket name ending in * stands for every socket it begins.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const [base, ...sockets] = process.argv.slice(2);
if (!base || !base.includes("muster-")) process.exit(2);

/** The tmux sockets to close: exact names, and those a `prefix*` names that exist now. */
function socketNames() {
  const dir = path.join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid()}`);
  let present = [];
  try {
    present = fs.readdirSync(dir);
  } catch {}
  return sockets.flatMap((s) =>
    s.endsWith("*") ? present.filter((n) => n.startsWith(s.slice(0, -1))) : [s],
  );
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function mentioning() {
  const out = [];
  for (const n of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    if (Number(n) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${n}/cmdline`, "utf8").includes(base)) out.push(Number(n));
    } catch {}
  }
  return out;
}

async function reap() {
  // Closing the server hangs up every pane: each host records its child lost and exits.
  for (const socket of socketNames()) spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  for (let i = 0; i < 50 && mentioning().length > 0; i++) {
    if (i === 10) for (const pid of mentioning()) signal(pid, "SIGTERM");
    if (i === 40) for (const pid of mentioning()) signal(pid, "SIGKILL");
    await sleep(100);
  }
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {}
}

process.stdin.resume();
process.stdin.on("end", () => void reap());
process.stdin.on("error", () => void reap());
