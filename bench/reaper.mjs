#!/usr/bin/env node
// A benchmark's clean-up that outlives it: started detached with a pipe on stdin, it waits for that pipe to
// close (the benchmark ended: finished, SIGTERM, SIGINT, even SIGKILL), then kills the benchmark's private tmux
// server, ends every process that still mentions its temp dir (child hosts, their agents, pty holders) and
// removes the dir. Namespaces pinned under the dir (the SSH test hosts of test/fixtures/ssh-hosts.mjs, the
// test place's mount namespace) go first: every process in them is killed and their pins unmounted. Usage
// (from startReaper in env.mjs): node bench/reaper.mjs <base> <tmux-socket>… [--remove=<path>]…, where a
// socket name ending in * stands for every socket it begins, and each --remove path is removed as well.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const [base, ...rest] = process.argv.slice(2);
if (!base || !base.includes("muster-")) process.exit(2);
const sockets = rest.filter((a) => !a.startsWith("--remove="));
const removals = rest.filter((a) => a.startsWith("--remove=")).map((a) => a.slice("--remove=".length));

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

/** The namespace pins mounted under base, with the namespace each names (`net:[4026…]`), from mountinfo. */
function pinsUnderBase() {
  let lines = [];
  try {
    lines = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n");
  } catch {}
  const pins = [];
  for (const line of lines) {
    const [left, right] = line.split(" - ");
    const f = left?.split(" ") ?? [];
    const [root, point] = [f[3], f[4]?.replace(/\\040/g, " ")];
    if (right?.startsWith("nsfs ") && point?.startsWith(`${base}/`)) pins.push({ point, ns: root });
  }
  return pins;
}

/** Kills every process in the namespaces pinned under base, then drops the pins. */
async function reapNamespaces() {
  const pins = pinsUnderBase();
  if (pins.length === 0) return;
  const ids = new Set(pins.map((p) => p.ns));
  const inside = () => {
    const out = [];
    for (const n of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      if (Number(n) === process.pid) continue;
      for (const kind of ["net", "mnt"]) {
        try {
          if (ids.has(fs.readlinkSync(`/proc/${n}/ns/${kind}`))) {
            out.push(Number(n));
            break;
          }
        } catch {}
      }
    }
    return out;
  };
  for (let i = 0; i < 50; i++) {
    const left = inside();
    if (left.length === 0) break;
    for (const pid of left) signal(pid, "SIGKILL");
    await sleep(100);
  }
  for (const p of pins) spawnSync("umount", [p.point], { stdio: "ignore" });
}

async function reap() {
  await reapNamespaces();
  // Closing the server hangs up every pane: each host records its child lost and exits.
  for (const socket of socketNames()) spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  for (let i = 0; i < 50 && mentioning().length > 0; i++) {
    if (i === 10) for (const pid of mentioning()) signal(pid, "SIGTERM");
    if (i === 40) for (const pid of mentioning()) signal(pid, "SIGKILL");
    await sleep(100);
  }
  fs.rmSync(base, { recursive: true, force: true, maxRetries: 5 });
  for (const p of removals) fs.rmSync(p, { recursive: true, force: true, maxRetries: 5 });
}

function signal(pid, sig) {
  try {
    process.kill(pid, sig);
  } catch {}
}

process.stdin.resume();
process.stdin.on("end", () => void reap());
process.stdin.on("error", () => void reap());
