#!/usr/bin/env node
// Spawn time and completion latency through the mirror-fed store (children of the test place in
// test/fixtures/ns-place.mjs: hosts in a mount namespace whose artifacts the parent sees only through the
// artifact mirror) against the local store, in one run, as ratios. Root only (mount namespaces): elsewhere
// it says so and measures nothing. Usage: node bench/mirror.mjs [spawns=10] [children=8]
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster, loadBackendModules } from "../dist/index.js";
import { createNamespace } from "../test/fixtures/ns-place.mjs";
import { completionRound } from "./completion.mjs";
import { benchEnv, startReaper } from "./env.mjs";
import { spawnLatency } from "./spawn-latency.mjs";
import { pct, round } from "./stats.mjs";

const MODULE = path.resolve(import.meta.dirname, "..", "test", "fixtures", "ns-place.mjs");

/** p50/p95 of spawn → turn_started and of 8 completions at once, local and through the mirror. */
export async function mirrorVsLocal(spawns = 10, children = 8) {
  if (process.getuid?.() !== 0) return { skipped: "needs root (mount namespaces)" };
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-mirror-"));
  const socket = `mbm-${process.pid}`;
  startReaper(base, [socket]);
  const nsDir = path.join(base, "ns");
  const env = { ...benchEnv(base, socket), MUSTER_BACKEND_MODULE: MODULE, MUSTER_TEST_NS_DIR: nsDir };
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  await loadBackendModules(env, cwd);
  const m = createMuster({ env, cwd });
  let pin;
  try {
    await m.spawn({ agent: "mock", prompt: "mock: reply=warm-up" });
    const primary = path.join(env.MUSTER_HOME, "primaries", m.primary);
    pin = createNamespace(
      nsDir,
      "bench",
      ["artifacts", "subagents", "slots"].map((d) => path.join(primary, d)),
    );
    const far = { place: "ns:bench" };
    await m.spawn({ ...far, agent: "mock", prompt: "mock: reply=warm-up" }); // the namespace's tmux server
    const spawn = { local: [], mirror: [] };
    // Interleaved rounds, so a slow moment of the machine lands on both sides alike.
    for (let i = 0; i < spawns; i++) {
      spawn.local.push(...(await spawnLatency(m, 1)));
      spawn.mirror.push(...(await spawnLatency(m, 1, far)));
    }
    const done = { local: [], mirror: [] };
    const alone = { local: [], mirror: [] };
    for (let r = 0; r < 2; r++) {
      done.local.push(...(await completionRound(m, base, children)));
      done.mirror.push(...(await completionRound(m, base, children, far)));
    }
    for (let r = 0; r < 5; r++) {
      alone.local.push(...(await completionRound(m, base, 1)));
      alone.mirror.push(...(await completionRound(m, base, 1, far)));
    }
    const row = (xs) => ({ p50: round(pct(xs, 50)), p95: round(pct(xs, 95)) });
    const s = { local: row(spawn.local), mirror: row(spawn.mirror) };
    const c = { local: row(done.local), mirror: row(done.mirror) };
    const one = { local: row(alone.local), mirror: row(alone.mirror) };
    return {
      spawnToTurnStartedMs: { ...s, p50Ratio: round(s.mirror.p50 / s.local.p50) },
      completionAloneMs: { ...one, addedP50: round(one.mirror.p50 - one.local.p50) },
      completionMs: {
        children,
        ...c,
        p50Ratio: round(c.mirror.p50 / Math.max(c.local.p50, 1)),
        p95Ratio: round(c.mirror.p95 / Math.max(c.local.p95, 1)),
      },
    };
  } finally {
    await m.cancelTree(undefined, { graceMs: 2000 }).catch(() => {});
    for (const server of [
      ["-L", socket],
      ["-S", path.join(nsDir, "bench-tmux", "tmux-0", socket)],
    ])
      try {
        execFileSync("tmux", [...server, "kill-server"], { stdio: "ignore" });
      } catch {}
    await stopPlaceKeepers(base);
    if (pin)
      try {
        execFileSync("umount", [pin]);
      } catch {}
    fs.rmSync(base, { recursive: true, force: true });
  }
}

/** Stops the place keepers of this run (they would wait a while for another child) and waits for them. */
export async function stopPlaceKeepers(base) {
  const keepers = fs
    .readdirSync("/proc")
    .filter((n) => /^\d+$/.test(n))
    .filter((n) => {
      try {
        const cmd = fs.readFileSync(`/proc/${n}/cmdline`, "utf8");
        return cmd.includes("place-keeper-main") && cmd.includes(base);
      } catch {
        return false;
      }
    })
    .map(Number);
  for (const pid of keepers)
    try {
      process.kill(pid, "SIGTERM");
    } catch {}
  for (let i = 0; i < 100 && keepers.some((pid) => fs.existsSync(`/proc/${pid}`)); i++)
    await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 300));
}

/** The table's rows: [measure, result, target]. */
export function mirrorRows(r) {
  if (r.skipped) return [["mirror-fed vs local store", `not measured: ${r.skipped}`, "≤ 1.2×"]];
  const { spawnToTurnStartedMs: s, completionMs: c, completionAloneMs: one } = r;
  return [
    [
      "spawn → turn_started, mirror ÷ local",
      `${s.p50Ratio}× (p50 ${s.mirror.p50} vs ${s.local.p50} ms)`,
      "≤ 1.2×",
    ],
    [
      "completion latency alone, mirror vs local",
      `p50 ${one.mirror.p50} vs ${one.local.p50} ms (+${one.addedP50} ms)`,
      "≤ 1.2×",
    ],
    [
      `completion latency, ${c.children} at once, mirror ÷ local`,
      `p50 ${c.p50Ratio}× (${c.mirror.p50} vs ${c.local.p50} ms), p95 ${c.p95Ratio}× (${c.mirror.p95} vs ${c.local.p95} ms)`,
      "≤ 1.2×",
    ],
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await mirrorVsLocal(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 8));
  for (const [name, result] of mirrorRows(r)) console.log(`${name}: ${result}`);
  process.exit(0);
}
