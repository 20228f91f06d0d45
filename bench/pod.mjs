#!/usr/bin/env node
// Children in Kubernetes Pods (place k8s:<id>, `muster spawn --on k8s`) against local children, in one run, as
// ratios: spawn → turn_started, and one completion → the waiter. The cluster is the stand-in API server
// (test/fixtures/k8s-standin.mjs) in this process: the real API and exec-over-WebSocket protocol, but each Pod
// is a folder on this machine whose processes run here, started ~10 ms after it is made. With no scheduler
// and no image to pull, what the ratio shows is muster's own overhead: the Pod's API calls, the install into
// it and every command (and the mirror's link) going through exec. Root only (the stand-in finds a Pod's
// daemons through /proc): elsewhere it says why and measures nothing.
// Usage: node bench/pod.mjs [spawns=10] [alone=5]
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { startK8sStandin } from "../test/fixtures/k8s-standin.mjs";
import { benchEnv, killServer, startReaper } from "./env.mjs";
import { stopPlaceKeepers } from "./mirror.mjs";
import { spawnLatency } from "./spawn-latency.mjs";
import { pct, round } from "./stats.mjs";

const IN_POD = { on: "k8s" };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Whether `dir`'s (mirrored) log has a record of `type`. */
function has(dir, type) {
  try {
    return fs.readFileSync(path.join(dir, "events.ndjson"), "utf8").includes(`"type":"${type}"`);
  } catch {
    return false;
  }
}

/**
 * One child, its turn held at `gate` until it has started; the sample is its completion's ts → the waiter has
 * it. A Pod mounts nothing from here, but the stand-in's Pods are processes on this machine: an absolute
 * path outside the Pod's folder reaches them as it does a local child, and it is known before the spawn (the
 * Pod's own folder is named after the child's id, which the prompt would have to name first).
 */
async function aloneRound(m, gate, spawnOpts) {
  const s = await m.spawn({
    agent: "mock",
    prompt: `mock: gate=${encodeURIComponent(gate)} reply=done`,
    ...spawnOpts,
  });
  for (let t = Date.now(); !has(s.artifactDir, "turn_started"); await sleep(100))
    if (Date.now() - t > 60_000) throw new Error("turn not started after 60 s");
  await sleep(1000); // let the mock reach the gate
  setTimeout(() => fs.writeFileSync(gate, "go"), 200);
  const samples = [];
  const outcome = await m.wait([s.id], {
    mode: "all",
    timeoutMs: 60_000,
    onEvent: (_id, e) => {
      if (e.type === "completion") samples.push(Date.now() - Date.parse(e.ts));
    },
  });
  if (outcome.results.length !== 1) throw new Error(`child ${s.id} did not complete`);
  return samples;
}

/** Pod vs local: spawn → turn_started, and one completion alone → the waiter. */
export async function podVsLocal(spawns = 10, alones = 5) {
  if (process.getuid?.() !== 0) return { skipped: "needs root" };
  const t0 = Date.now();
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-pod-"));
  // The stand-in's folder (its kubeconfig and every Pod's folder), named as the k8s tests name theirs.
  const apiBase = fs.mkdtempSync(path.join(os.tmpdir(), "mu-k8s-"));
  const socket = `mbk-${process.pid}`;
  // Ended however the bench ends: tmux, keepers, and the Pods' processes (the stand-in dies with this
  // process, but what it started in a Pod runs on in a session of its own).
  startReaper(base, [socket, `--k8s=${apiBase}`]);
  let api;
  let m;
  try {
    api = await startK8sStandin(apiBase);
    const env = { ...benchEnv(base, socket), KUBECONFIG: api.kubeconfig };
    // A Pod's processes start without it (the stand-in passes only the Pod's own env); here the local runners
    // would get it (~50 ms a node start): without it both sides start their agents' node alike.
    delete env.NODE_EXTRA_CA_CERTS;
    const cwd = path.join(base, "work");
    fs.mkdirSync(cwd, { recursive: true });
    // The gates: outside every Pod's folder and the working directory, so that they open only because the
    // Pods' processes run on this machine.
    const gates = path.join(apiBase, "gates");
    fs.mkdirSync(gates);
    m = createMuster({ env, cwd });

    // Warm-up, not samples: the local tmux server, and a first Pod (the Kubernetes client loaded and its first
    // connection made; each Pod still gets its own install of muster).
    const warm = [];
    for (const opts of [{}, IN_POD])
      warm.push((await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up", ...opts })).id);
    await m.wait(warm, { mode: "all", timeoutMs: 120_000 });
    // Each sample's children are removed before the next (their Pods deleted): idle Pods piling up would
    // load the machine for the later samples only.
    const dropSamples = async () => {
      const ids = m.subtree().filter((id) => !warm.includes(id));
      if (ids.length > 0) await m.remove(ids, { force: true });
    };

    // Interleaved, so a slow moment of the machine lands on both sides alike.
    const spawn = { local: [], pod: [] };
    for (let i = 0; i < spawns; i++) {
      spawn.local.push(...(await spawnLatency(m, 1)));
      spawn.pod.push(...(await spawnLatency(m, 1, IN_POD)));
      await dropSamples();
    }
    const alone = { local: [], pod: [] };
    for (let r = 0; r < alones; r++) {
      alone.local.push(...(await aloneRound(m, path.join(gates, `local-${r}`), {})));
      alone.pod.push(...(await aloneRound(m, path.join(gates, `pod-${r}`), IN_POD)));
      await dropSamples();
    }

    const row = (xs) => ({ p50: round(pct(xs, 50)), p90: round(pct(xs, 90)) });
    const ratio = (a, b) => round(a / Math.max(b, 1), 2);
    const s = { local: row(spawn.local), pod: row(spawn.pod) };
    const one = { local: row(alone.local), pod: row(alone.pod) };
    return {
      cluster: "stand-in API server",
      spawnToTurnStartedMs: { n: spawn.local.length, ...s, p50Ratio: ratio(s.pod.p50, s.local.p50) },
      completionAloneMs: { n: alone.local.length, ...one, p50Ratio: ratio(one.pod.p50, one.local.p50) },
      seconds: round((Date.now() - t0) / 1000, 0),
    };
  } finally {
    // Removing a Pod child deletes its Pod (the stand-in ends its processes) and stops its place's keeper.
    if (m) await m.remove(m.subtree(), { force: true }).catch(() => {});
    await killServer(socket, { under: base, timeoutMs: 10_000 }).catch(() => {});
    await stopPlaceKeepers(base);
    await api?.stop().catch((e) => process.stderr.write(`pod bench: ${e.message}\n`));
    fs.rmSync(apiBase, { recursive: true, force: true });
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** The table's rows: [measure, result, target]; no target is set yet, the ratios are recorded. */
export function podRows(r) {
  if (r.skipped) return [["Pod (stand-in) ÷ local", `not measured: ${r.skipped}`, "recorded"]];
  const { spawnToTurnStartedMs: s, completionAloneMs: one } = r;
  return [
    [
      "spawn → turn_started, Pod (stand-in) ÷ local",
      `p50 ${s.p50Ratio}× (${s.pod.p50} vs ${s.local.p50} ms), p90 ${s.pod.p90} vs ${s.local.p90} ms`,
      "recorded",
    ],
    [
      "completion latency alone, Pod (stand-in) ÷ local",
      `p50 ${one.p50Ratio}× (${one.pod.p50} vs ${one.local.p50} ms), p90 ${one.pod.p90} vs ${one.local.p90} ms`,
      "recorded",
    ],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  const r = await podVsLocal(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5));
  for (const [name, result] of podRows(r)) console.log(`${name}: ${result}`);
  if (!r.skipped)
    console.log(`measured in ${r.seconds} s, ${round((Date.now() - t0) / 1000, 0)} s with clean-up`);
  process.exit(0);
}
