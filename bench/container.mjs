#!/usr/bin/env node
// Children in containers (place container:<id>, `muster spawn --in container`) against local children, in one
// run, as ratios: spawn → turn_started, and one completion → the waiter. The engine is a private dockerd under
// a temp folder (test/fixtures/docker-engine.mjs: a unix socket, no bridge, no iptables), the image is the one
// `muster image build` makes from this machine's files, and every container has no network (the mock's
// default). Root and docker.io only: elsewhere it says why and measures nothing.
// Usage: node bench/container.mjs [spawns=10] [alone=5]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { dockerAvailable, startDockerEngine } from "../test/fixtures/docker-engine.mjs";
import { benchEnv, killServer, startReaper } from "./env.mjs";
import { stopPlaceKeepers } from "./mirror.mjs";
import { spawnLatency } from "./spawn-latency.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.resolve(import.meta.dirname, "..", "bin", "muster.js");
const IN_CONTAINER = { container: {} };
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
 * it. The gate is in the working directory, which a container has mounted: one write here opens it on both
 * sides.
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

/** Container vs local: spawn → turn_started, and one completion alone → the waiter. */
export async function containerVsLocal(spawns = 10, alones = 5) {
  const can = dockerAvailable();
  if (!can.ok) return { skipped: can.why };
  const t0 = Date.now();
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-container-"));
  // Named so the CI's leftover check (.ci/run) looks there, as it does for the tests' engines.
  const engineBase = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
  const socket = `mbd-${process.pid}`;
  // Ended however the bench ends: tmux, keepers, and the engine with its containers.
  startReaper(base, [socket, `--engine=${engineBase}`]);
  let engine;
  let m;
  try {
    engine = await startDockerEngine(engineBase);
    // This engine's client, whatever the caller's environment names.
    const env = { ...benchEnv(base, socket), ...engine.env, MUSTER_CONTAINER_ENGINE: engine.cli };
    // A container's agents start without it (only variables passed by name go in); here the runners would get
    // it (~50 ms a node start): without it both sides start their agents' node alike.
    delete env.NODE_EXTRA_CA_CERTS;
    const cwd = path.join(base, "work");
    fs.mkdirSync(cwd, { recursive: true });
    const built = spawnSync(process.execPath, [BIN, "image", "build"], {
      env,
      cwd,
      encoding: "utf8",
      timeout: 300_000,
    });
    if (built.status !== 0)
      throw new Error(`muster image build exited ${built.status}: ${built.stderr.trim()}`);
    m = createMuster({ env, cwd });

    // Warm-up, not samples: the local tmux server, and the engine's first container from the image.
    const warm = [];
    for (const opts of [{}, IN_CONTAINER])
      warm.push((await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up", ...opts })).id);
    await m.wait(warm, { mode: "all", timeoutMs: 120_000 });
    // Each sample's children are removed before the next: idle containers piling up would load the machine
    // for the later samples only.
    const dropSamples = async () => {
      const ids = m.subtree().filter((id) => !warm.includes(id));
      if (ids.length > 0) await m.remove(ids, { force: true });
    };

    // Interleaved, so a slow moment of the machine lands on both sides alike.
    const spawn = { local: [], container: [] };
    for (let i = 0; i < spawns; i++) {
      spawn.local.push(...(await spawnLatency(m, 1)));
      spawn.container.push(...(await spawnLatency(m, 1, IN_CONTAINER)));
      await dropSamples();
    }
    const alone = { local: [], container: [] };
    for (let r = 0; r < alones; r++) {
      alone.local.push(...(await aloneRound(m, path.join(cwd, `gate-local-${r}`), {})));
      alone.container.push(...(await aloneRound(m, path.join(cwd, `gate-container-${r}`), IN_CONTAINER)));
      await dropSamples();
    }

    const row = (xs) => ({ p50: round(pct(xs, 50)), p90: round(pct(xs, 90)) });
    const ratio = (a, b) => round(a / Math.max(b, 1), 2);
    const s = { local: row(spawn.local), container: row(spawn.container) };
    const one = { local: row(alone.local), container: row(alone.container) };
    return {
      engine: "docker",
      engineStartMs: engine.startMs,
      spawnToTurnStartedMs: { n: spawn.local.length, ...s, p50Ratio: ratio(s.container.p50, s.local.p50) },
      completionAloneMs: { n: alone.local.length, ...one, p50Ratio: ratio(one.container.p50, one.local.p50) },
      seconds: round((Date.now() - t0) / 1000, 0),
    };
  } finally {
    // Removing a container child removes its container and stops its place's keeper.
    if (m) await m.remove(m.subtree(), { force: true }).catch(() => {});
    await killServer(socket, { under: base, timeoutMs: 10_000 }).catch(() => {});
    await stopPlaceKeepers(base);
    await engine?.stop().catch((e) => process.stderr.write(`container bench: ${e.message}\n`));
    fs.rmSync(engineBase, { recursive: true, force: true });
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** The table's rows: [measure, result, target]; no target is set yet, the ratios are recorded. */
export function containerRows(r) {
  if (r.skipped) return [["container ÷ local", `not measured: ${r.skipped}`, "recorded"]];
  const { spawnToTurnStartedMs: s, completionAloneMs: one } = r;
  return [
    [
      "spawn → turn_started, container ÷ local",
      `p50 ${s.p50Ratio}× (${s.container.p50} vs ${s.local.p50} ms), p90 ${s.container.p90} vs ${s.local.p90} ms`,
      "recorded",
    ],
    [
      "completion latency alone, container ÷ local",
      `p50 ${one.p50Ratio}× (${one.container.p50} vs ${one.local.p50} ms), p90 ${one.container.p90} vs ${one.local.p90} ms`,
      "recorded",
    ],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const t0 = Date.now();
  const r = await containerVsLocal(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5));
  for (const [name, result] of containerRows(r)) console.log(`${name}: ${result}`);
  if (!r.skipped)
    console.log(`measured in ${r.seconds} s, ${round((Date.now() - t0) / 1000, 0)} s with clean-up`);
  process.exit(0);
}
