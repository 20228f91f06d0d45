#!/usr/bin/env node
// A benchmark's clean-up that outlives it: started detached with a pipe on stdin, it waits for that pipe to
// close (the benchmark ended: finished, SIGTERM, SIGINT, even SIGKILL), then kills the benchmark's private tmux
// server, ends every process that still mentions its temp dir (child hosts, their agents, pty holders) and
// removes the dir. Namespaces pinned under the dir (the SSH test hosts of test/fixtures/ssh-hosts.mjs, the
// test place's mount namespace) go first: every process in them is killed and their pins unmounted, and so do
// private container engines (test/fixtures/docker-engine.mjs): their containers, daemons and mounts, and the
// Pods of a Kubernetes stand-in (test/fixtures/k8s-standin.mjs): their processes. Usage (from startReaper in
// env.mjs): node bench/reaper.mjs <base> <tmux-socket>… [--remove=<path>]… [--engine=<dir>]…
// [--k8s=<dir>]…, where a socket name ending in * stands for every socket it begins, each --remove path is
// removed as well, each --engine dir is a private engine's folder and each --k8s dir a stand-in API
// server's.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { enginePids, mountsUnder } from "../test/fixtures/docker-engine.mjs";

const [base, ...rest] = process.argv.slice(2);
if (!base || !base.includes("muster-")) process.exit(2);
const option = (name) => rest.filter((a) => a.startsWith(`--${name}=`)).map((a) => a.slice(name.length + 3));
const sockets = rest.filter((a) => !a.startsWith("--"));
const removals = option("remove");
const engines = option("engine").filter((d) => path.basename(d).startsWith("mu-docker-"));
const standins = option("k8s").filter((d) => path.basename(d).startsWith("mu-k8s-"));

/** Where tmux keeps this user's sockets. */
const socketDir = () => path.join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid()}`);

/** The tmux sockets to close: exact names, and those a `prefix*` names that exist now. */
function socketNames() {
  let present = [];
  try {
    present = fs.readdirSync(socketDir());
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

/**
 * A private dockerd under `dir` that its benchmark did not stop: its containers removed, the daemon asked to
 * stop, then whatever it started still running (containerd, shims, what ran in a container) killed, its
 * mounts dropped and the folder removed.
 */
async function reapEngine(dir) {
  if (!fs.existsSync(dir)) return; // stopped and removed by the benchmark
  dir = fs.realpathSync(dir); // as the engine's processes name it
  const env = {
    ...process.env,
    DOCKER_HOST: `unix://${dir}/docker.sock`,
    DOCKER_CONFIG: path.join(dir, "client"),
  };
  const ps = spawnSync("docker", ["ps", "-aq", "--no-trunc"], { env, encoding: "utf8", timeout: 15_000 });
  const ids = (ps.stdout ?? "").split("\n").filter(Boolean);
  if (ids.length > 0) spawnSync("docker", ["rm", "-f", ...ids], { env, stdio: "ignore", timeout: 30_000 });
  let daemon = 0;
  try {
    daemon = Number(fs.readFileSync(path.join(dir, "dockerd.pid"), "utf8").trim());
  } catch {}
  if (Number.isInteger(daemon) && daemon > 1) signal(daemon, "SIGTERM");
  for (let i = 0; i < 250 && enginePids(dir, ids).length > 0; i++) {
    if (i === 200) for (const pid of enginePids(dir, ids)) signal(pid, "SIGKILL");
    await sleep(100);
  }
  for (const m of mountsUnder(dir))
    if (spawnSync("umount", [m], { stdio: "ignore" }).status !== 0)
      spawnSync("umount", ["-l", m], { stdio: "ignore" });
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

/**
 * The processes of a stand-in API server's Pods under `dir` that its benchmark did not stop. The stand-in ran
 * in the benchmark's process and went with it, but each command it exec'd in a Pod runs in a session of its
 * own and outlives it: found as the stand-in finds them (a cwd, HOME or TMUX_TMPDIR in a Pod's folder, or
 * the folder on the command line: muster's install in the Pod, the exec link here), then the folder removed.
 */
async function reapStandin(dir) {
  if (!fs.existsSync(dir)) return; // stopped and removed by the benchmark
  dir = fs.realpathSync(dir);
  const under = (p) => p === dir || p.startsWith(`${dir}/`);
  const inPods = () => {
    const out = [];
    for (const n of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      if (Number(n) === process.pid) continue;
      try {
        if (fs.readFileSync(`/proc/${n}/cmdline`, "utf8").includes(dir)) out.push(Number(n));
        else if (under(fs.readlinkSync(`/proc/${n}/cwd`))) out.push(Number(n));
        else {
          const env = fs.readFileSync(`/proc/${n}/environ`, "utf8").split("\0");
          if (env.some((v) => /^(HOME|TMUX_TMPDIR)=/.test(v) && under(v.slice(v.indexOf("=") + 1))))
            out.push(Number(n));
        }
      } catch {}
    }
    return out;
  };
  for (let i = 0; i < 50 && inPods().length > 0; i++) {
    if (i === 0) for (const pid of inPods()) signal(pid, "SIGTERM");
    if (i === 20) for (const pid of inPods()) signal(pid, "SIGKILL");
    await sleep(100);
  }
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}

async function reap() {
  await reapNamespaces();
  for (const dir of engines) await reapEngine(dir);
  for (const dir of standins) await reapStandin(dir);
  // Closing the server hangs up every pane: each host records its child lost and exits. A server that died
  // by a signal left its socket file behind (kill-server then finds no server): it goes too.
  for (const socket of socketNames()) {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(path.join(socketDir(), socket), { force: true });
  }
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
