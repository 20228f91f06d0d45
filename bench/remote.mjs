#!/usr/bin/env node
// Children on SSH hosts (place ssh:<host>, `muster spawn --on <host>`) against local children, in one run, as
// ratios: spawn → turn_started, one completion alone and 32 at once spread over 3 hosts, a follow-up's round trip
// (`muster send --wait`), and the ssh processes on this machine while 32 remote children are live. The hosts
// are real sshd test hosts in namespaces of their own (test/fixtures/ssh-hosts.mjs): loopback, no network.
// Root, sshd and nc only: elsewhere it says why and measures nothing.
// Usage: node bench/remote.mjs [spawns=10] [rounds=2] [sends=5] [alone=5]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { disconnectHost } from "../dist/place/ssh/admin.js";
import { controlDirFor } from "../dist/place/ssh/place.js";
import { sshHostsAvailable, startSshHost } from "../test/fixtures/ssh-hosts.mjs";
import { benchEnv, killServer, startReaper } from "./env.mjs";
import { stopPlaceKeepers } from "./mirror.mjs";
import { spawnLatency } from "./spawn-latency.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.resolve(import.meta.dirname, "..", "bin", "muster.js");
const HOSTS = ["h1", "h2", "h3"];
const CHILDREN = 32;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs the CLI with the bench's env; returns its stdout, throws on a non-zero exit. */
function cli(env, cwd, args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`muster ${args.join(" ")} exited ${r.status}: ${r.stderr.trim()}`);
  return r.stdout;
}

/** Whether every one of `dirs` has `type` in its (mirrored) log. */
const allHave = (dirs, type) =>
  dirs.every((d) => {
    try {
      return fs.readFileSync(path.join(d, "events.ndjson"), "utf8").includes(`"type":"${type}"`);
    } catch {
      return false;
    }
  });

/** The ssh clients on this machine that belong to this run (their config or master socket names it). */
function sshProcesses(marks) {
  const out = [];
  for (const n of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (fs.readFileSync(`/proc/${n}/comm`, "utf8").trim() !== "ssh") continue;
      const cmd = fs.readFileSync(`/proc/${n}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      if (marks.some((m) => cmd.includes(m))) out.push({ pid: Number(n), cmd });
    } catch {}
  }
  return out;
}

/**
 * One round: `n` children, each spawned with `spawnOpts(i)` and its turn held at the file `gate(i)` (on the
 * machine it runs on); once every turn has started, `open()` lets them all finish at once. Samples: each
 * completion's ts → the waiter has it.
 * `whileLive` runs while all n are live, before the gate opens.
 */
async function gatedRound(m, n, { spawnOpts, gate, open, whileLive }) {
  const spawned = [];
  for (let i = 0; i < n; i++)
    spawned.push(
      await m.spawn({
        agent: "mock",
        prompt: `mock: gate=${encodeURIComponent(gate(i))} reply=done`,
        ...spawnOpts(i),
      }),
    );
  const dirs = spawned.map((s) => s.artifactDir);
  for (let t = Date.now(); !allHave(dirs, "turn_started"); await sleep(100))
    if (Date.now() - t > 120_000) throw new Error("turns not started after 120 s");
  await sleep(1000); // let the last mocks reach the gate
  const live = whileLive?.();
  const ids = spawned.map((s) => s.id);
  const samples = [];
  setTimeout(() => void open(), 200);
  const outcome = await m.wait(ids, {
    mode: "all",
    timeoutMs: 120_000,
    onEvent: (_id, e) => {
      if (e.type === "completion") samples.push(Date.now() - Date.parse(e.ts));
    },
  });
  if (outcome.results.length !== n) throw new Error(`only ${outcome.results.length}/${n} completed`);
  await m.cancelMany(ids);
  return { samples, live };
}

/** Wall time of one `muster send <id> --wait` on an idle child: the CLI start-up is in it on both sides. */
function sendRoundTrip(env, cwd, id) {
  const t0 = performance.now();
  cli(env, cwd, ["send", id, "--wait", "--timeout", "60s", "mock: reply=again"]);
  return performance.now() - t0;
}

/** Remote vs local: spawn → turn_started, 32 completions at once, a follow-up's round trip, ssh processes. */
export async function remoteVsLocal(spawns = 10, rounds = 2, sends = 5, alones = 5) {
  const can = sshHostsAvailable();
  if (!can.ok) return { skipped: can.why };
  const t0 = Date.now();
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-remote-"));
  const socket = `mbr-${process.pid}`;
  const env = benchEnv(base, socket);
  // A host there starts its agents without it (sshd hands them no such variable); here the runners get it
  // (~50 ms a node start): without it both sides start their agents' node alike.
  delete env.NODE_EXTRA_CA_CERTS;
  const controlDir = controlDirFor(env.MUSTER_HOME);
  // Ended however the bench ends: the hosts' namespaces and all in them, tmux, keepers, links, masters.
  startReaper(base, [socket, `--remove=${controlDir}`]);
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  const hosts = [];
  // A host's own folder of the fixture is the one path it shares with this machine (bind-mounted at the same
  // place): a gate there opens with a file written here, as the local gate does. Opened with nsenter, the
  // waiting process itself forked one process per host (tens of ms each under load) while completions came.
  const farGate = (name, file) => path.join(base, "hosts", name, file);
  const m = createMuster({ env, cwd });
  try {
    for (const name of HOSTS) {
      const h = startSshHost(path.join(base, "hosts"), name);
      hosts.push(h);
      cli(env, cwd, ["hosts", "add", name, h.alias, "--ssh-config", h.config, "--workdir", "/root"]);
    }
    const on = (name) => ({ place: `ssh:${name}` });
    // Warm-up, not samples: the local tmux server, and on each host muster's install, tmux server and link.
    const idleLocal = (await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up" })).id;
    await m.wait([idleLocal], { mode: "all", timeoutMs: 60_000 });
    const idleRemote = [];
    for (const name of HOSTS) {
      const s = await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up", ...on(name) });
      idleRemote.push(s.id);
    }
    await m.wait(idleRemote, { mode: "all", timeoutMs: 120_000 });

    // Interleaved, so a slow moment of the machine lands on both sides alike.
    const spawn = { local: [], remote: [] };
    for (let i = 0; i < spawns; i++) {
      spawn.local.push(...(await spawnLatency(m, 1)));
      spawn.remote.push(...(await spawnLatency(m, 1, on("h1"))));
    }

    const send = { local: [], remote: [] };
    for (let i = 0; i < sends; i++) {
      send.local.push(sendRoundTrip(env, cwd, idleLocal));
      send.remote.push(sendRoundTrip(env, cwd, idleRemote[0]));
    }

    const done = { local: [], remote: [] };
    const ssh = [];
    const marks = [base, controlDir];
    for (let r = 0; r < rounds; r++) {
      const localGate = path.join(base, `gate-${r}`);
      const local = await gatedRound(m, CHILDREN, {
        spawnOpts: () => ({}),
        gate: () => localGate,
        open: () => fs.writeFileSync(localGate, "go"),
      });
      done.local.push(...local.samples);
      const farGates = HOSTS.map((name) => farGate(name, `open-${r}`));
      const remote = await gatedRound(m, CHILDREN, {
        spawnOpts: (i) => on(HOSTS[i % HOSTS.length]),
        gate: (i) => farGates[i % HOSTS.length],
        // Every host at once, as the local gate: a file written here, no process started by the waiter.
        open: () => {
          for (const g of farGates) fs.writeFileSync(g, "go");
        },
        whileLive: () => sshProcesses(marks),
      });
      done.remote.push(...remote.samples);
      ssh.push(remote.live);
    }

    // One child at a time: what the hops cost without 32 hosts and agents contending for the cores.
    const alone = { local: [], remote: [] };
    for (let r = 0; r < alones; r++) {
      const localGate = path.join(base, `alone-${r}`);
      const local = await gatedRound(m, 1, {
        spawnOpts: () => ({}),
        gate: () => localGate,
        open: () => fs.writeFileSync(localGate, "go"),
      });
      alone.local.push(...local.samples);
      const gate = farGate("h1", `alone-${r}`);
      const remote = await gatedRound(m, 1, {
        spawnOpts: () => on("h1"),
        gate: () => gate,
        open: () => fs.writeFileSync(gate, "go"),
      });
      alone.remote.push(...remote.samples);
    }

    const row = (xs) => ({ p50: round(pct(xs, 50)), p95: round(pct(xs, 95)) });
    const ratio = (a, b) => round(a / Math.max(b, 1), 2);
    const s = { local: row(spawn.local), remote: row(spawn.remote) };
    const c = { local: row(done.local), remote: row(done.remote) };
    const f = { local: row(send.local), remote: row(send.remote) };
    const one = { local: row(alone.local), remote: row(alone.remote) };
    // Counted in the last round, while its 32 and every earlier idle remote child were live.
    const procs = ssh.at(-1);
    const masters = procs.filter((p) => p.cmd.includes("[mux]")).length;
    const links = procs.filter((p) => p.cmd.includes("relay-hub-main")).length;
    return {
      hosts: HOSTS.length,
      spawnToTurnStartedMs: {
        n: spawn.local.length,
        ...s,
        p50Ratio: ratio(s.remote.p50, s.local.p50),
        p95Ratio: ratio(s.remote.p95, s.local.p95),
      },
      completionMs: {
        children: CHILDREN,
        rounds,
        ...c,
        p50Ratio: ratio(c.remote.p50, c.local.p50),
        p95Ratio: ratio(c.remote.p95, c.local.p95),
      },
      completionAloneMs: { n: alone.local.length, ...one, p50Ratio: ratio(one.remote.p50, one.local.p50) },
      followUpRoundTripMs: { n: send.local.length, ...f, p50Ratio: ratio(f.remote.p50, f.local.p50) },
      sshProcesses: {
        liveRemoteChildren: CHILDREN + idleRemote.length + spawns,
        total: procs.length,
        masters,
        links,
        other: procs.length - masters - links,
        target: `at most ${2 * HOSTS.length} (one master and one link per host)`,
      },
      seconds: round((Date.now() - t0) / 1000, 0),
      target: "each ≤ 2× local",
    };
  } finally {
    await m.cancelTree(undefined, { graceMs: 2000 }).catch(() => {});
    await killServer(socket, { under: base, timeoutMs: 10_000 }).catch(() => {});
    await stopPlaceKeepers(base);
    for (const name of HOSTS) await disconnectHost(env, name).catch(() => {});
    for (const h of hosts)
      try {
        h.stop();
      } catch {}
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(controlDir, { recursive: true, force: true });
  }
}

/** The table's rows: [measure, result, target]. */
export function remoteRows(r) {
  if (r.skipped) return [["remote (SSH) ÷ local", `not measured: ${r.skipped}`, "≤ 2×"]];
  const {
    spawnToTurnStartedMs: s,
    completionMs: c,
    completionAloneMs: one,
    followUpRoundTripMs: f,
    sshProcesses: p,
  } = r;
  return [
    [
      "spawn → turn_started, remote (SSH) ÷ local",
      `p50 ${s.p50Ratio}× (${s.remote.p50} vs ${s.local.p50} ms), p95 ${s.p95Ratio}× (${s.remote.p95} vs ${s.local.p95} ms)`,
      "≤ 2×",
    ],
    [
      "completion latency alone, remote ÷ local",
      `p50 ${one.p50Ratio}× (${one.remote.p50} vs ${one.local.p50} ms)`,
      "≤ 2×",
    ],
    [
      `completion latency, ${c.children} at once over ${r.hosts} hosts, remote ÷ local`,
      `p50 ${c.p50Ratio}× (${c.remote.p50} vs ${c.local.p50} ms), p95 ${c.p95Ratio}× (${c.remote.p95} vs ${c.local.p95} ms)`,
      "≤ 2×",
    ],
    [
      "follow-up round trip (send --wait), remote ÷ local",
      `p50 ${f.p50Ratio}× (${f.remote.p50} vs ${f.local.p50} ms)`,
      "≤ 2×",
    ],
    [
      `ssh processes here, ${p.liveRemoteChildren} remote children live on ${r.hosts} hosts`,
      `${p.total} (${p.masters} masters, ${p.links} links, ${p.other} other)`,
      `≤ ${2 * r.hosts}`,
    ],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  const r = await remoteVsLocal(
    Number(process.argv[2] ?? 10),
    Number(process.argv[3] ?? 2),
    Number(process.argv[4] ?? 5),
    Number(process.argv[5] ?? 5),
  );
  for (const [name, result] of remoteRows(r)) console.log(`${name}: ${result}`);
  if (!r.skipped)
    console.log(`measured in ${r.seconds} s, ${round((Date.now() - t0) / 1000, 0)} s with clean-up`);
  process.exit(0);
}
