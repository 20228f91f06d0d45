// What the container and Pod rows share (bench/container.mjs, bench/pod.mjs): a place made for each child,
// measured against local children in one run, interleaved so a slow moment of the machine lands on both
// sides alike: spawn → turn_started, and one completion alone → the waiter. Each caller brings its place
// (an engine, a stand-in API server) and its own clean-up; this runs the samples and words the rows.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { benchEnv, killServer, startReaper } from "./env.mjs";
import { stopPlaceKeepers } from "./mirror.mjs";
import { spawnLatency } from "./spawn-latency.mjs";
import { pct, round } from "./stats.mjs";

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
 * One child, its turn held at `gate` (an absolute path its processes see) until it has started; the sample
 * is its completion's ts → the waiter has it.
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

/**
 * Measures children spawned with `spawnOpts` against local ones. `name` names the run's folders and tmux
 * socket; `reaper` the reaper's extra arguments (what it ends if the bench dies); `setup(env, cwd)` readies
 * the place and resolves `{ env, gates, stop }`: the environment to spawn with, a folder for the gates both
 * sides' processes see, and how to take the place down.
 */
export async function vsLocal({ name, socketPrefix, spawnOpts, spawns, alones, reaper, setup }) {
  const t0 = Date.now();
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `muster-${name}-`));
  const socket = `${socketPrefix}-${process.pid}`;
  startReaper(base, [socket, ...reaper]);
  let m;
  let placed;
  try {
    const env = benchEnv(base, socket);
    // A far child's agents start without it (only variables passed by name go there); here the runners would
    // get it (~50 ms a node start): without it both sides start their agents' node alike.
    delete env.NODE_EXTRA_CA_CERTS;
    const cwd = path.join(base, "work");
    fs.mkdirSync(cwd, { recursive: true });
    placed = await setup(env, cwd);
    m = createMuster({ env: placed.env, cwd });
    // Warm-up, not samples: the local tmux server, and the place's first child.
    const warm = [];
    for (const opts of [{}, spawnOpts])
      warm.push((await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up", ...opts })).id);
    await m.wait(warm, { mode: "all", timeoutMs: 120_000 });
    // Each sample's children are removed before the next: idle ones piling up would load the machine for the
    // later samples only.
    const dropSamples = async () => {
      const ids = m.subtree().filter((id) => !warm.includes(id));
      if (ids.length > 0) await m.remove(ids, { force: true });
    };
    const spawn = { local: [], far: [] };
    for (let i = 0; i < spawns; i++) {
      spawn.local.push(...(await spawnLatency(m, 1)));
      spawn.far.push(...(await spawnLatency(m, 1, spawnOpts)));
      await dropSamples();
    }
    const alone = { local: [], far: [] };
    for (let r = 0; r < alones; r++) {
      alone.local.push(...(await aloneRound(m, path.join(placed.gates, `local-${r}`), {})));
      alone.far.push(...(await aloneRound(m, path.join(placed.gates, `${name}-${r}`), spawnOpts)));
      await dropSamples();
    }
    const row = (xs) => ({ p50: round(pct(xs, 50)), p90: round(pct(xs, 90)) });
    const ratio = (a, b) => round(a / Math.max(b, 1), 2);
    const s = { local: row(spawn.local), far: row(spawn.far) };
    const one = { local: row(alone.local), far: row(alone.far) };
    return {
      ...placed.about,
      spawnToTurnStartedMs: { n: spawn.local.length, ...s, p50Ratio: ratio(s.far.p50, s.local.p50) },
      completionAloneMs: { n: alone.local.length, ...one, p50Ratio: ratio(one.far.p50, one.local.p50) },
      seconds: round((Date.now() - t0) / 1000, 0),
    };
  } finally {
    // Removing a far child removes what was made for it (its container, its Pod) and stops its keeper.
    if (m) await m.remove(m.subtree(), { force: true }).catch(() => {});
    await killServer(socket, { under: base, timeoutMs: 10_000 }).catch(() => {});
    await stopPlaceKeepers(base);
    await placed?.stop().catch((e) => process.stderr.write(`${name} bench: ${e.message}\n`));
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** The table's rows: [measure, result, target]; no target is set yet, the ratios are recorded. */
export function vsLocalRows(r, label) {
  if (r.skipped) return [[`${label} ÷ local`, `not measured: ${r.skipped}`, "recorded"]];
  const { spawnToTurnStartedMs: s, completionAloneMs: one } = r;
  return [
    [
      `spawn → turn_started, ${label} ÷ local`,
      `p50 ${s.p50Ratio}× (${s.far.p50} vs ${s.local.p50} ms), p90 ${s.far.p90} vs ${s.local.p90} ms`,
      "recorded",
    ],
    [
      `completion latency alone, ${label} ÷ local`,
      `p50 ${one.p50Ratio}× (${one.far.p50} vs ${one.local.p50} ms), p90 ${one.far.p90} vs ${one.local.p90} ms`,
      "recorded",
    ],
  ];
}

/** Runs a row from the command line: `node bench/<row>.mjs [spawns=10] [alone=5]`. */
export async function runAlone(measure, rows) {
  const t0 = Date.now();
  const r = await measure(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 5));
  for (const [n, result] of rows(r)) console.log(`${n}: ${result}`);
  if (!r.skipped)
    console.log(`measured in ${r.seconds} s, ${round((Date.now() - t0) / 1000, 0)} s with clean-up`);
  process.exit(0);
}
