#!/usr/bin/env node
// Delivery with many idle children alive: a follow-up sent to one idle child → its turn_started seen by the
// waiter (the host woke), and → its completion seen, first with that child alone, then with `idle` more idle
// children alive (each once held one of the user's 128 inotify instances). Part of `npm run bench`; run alone
// (after a build): node bench/idle-children.mjs [idle=200] [samples=15]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { benchEnv, startReaper } from "./env.mjs";
import { now, pct, round } from "./stats.mjs";

/** This user's inotify instances in use and the limit (as `muster doctor` counts them). */
function inotifyUsage() {
  try {
    const limit = Number(fs.readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8"));
    let inUse = 0;
    for (const p of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      try {
        for (const fd of fs.readdirSync(`/proc/${p}/fd`))
          if (fs.readlinkSync(`/proc/${p}/fd/${fd}`) === "anon_inode:inotify") inUse += 1;
      } catch {}
    }
    return { inUse, limit };
  } catch {
    return undefined;
  }
}

async function followUps(m, id, n) {
  const started = [];
  const delivered = [];
  for (let i = 0; i < n; i++) {
    const t0 = now();
    const f = await m.send(id, "mock: reply=ok");
    let s;
    await m.wait([id], {
      timeoutMs: 30_000,
      turns: new Map([[id, f.turnId]]),
      onEvent: (_id, e) => {
        if (e.type === "turn_started" && e.turnId === f.turnId) s ??= now() - t0;
      },
    });
    started.push(s ?? now() - t0);
    delivered.push(now() - t0);
  }
  const u = inotifyUsage();
  return {
    sendToTurnStarted: { p50: round(pct(started, 50)), p95: round(pct(started, 95)) },
    sendToCompletion: { p50: round(pct(delivered, 50)), p95: round(pct(delivered, 95)) },
    inotifyInUse: u ? `${u.inUse}/${u.limit}` : "n/a",
  };
}

/** The same follow-up measured with 1 and with 1 + `idle` idle children alive. */
export async function idleChildrenDelivery(muster, idle, n) {
  const m = muster("idle-children");
  const probe = (await m.spawn({ agent: "mock", prompt: "mock: reply=probe" })).id;
  await m.wait([probe], { timeoutMs: 60_000 });
  const alone = await followUps(m, probe, n);
  const ids = [];
  // In batches: a modest run time without 200 Node starts at one instant.
  for (let i = 0; i < idle; i += 20) {
    const batch = [];
    for (let j = i; j < Math.min(idle, i + 20); j++)
      batch.push(m.spawn({ agent: "mock", prompt: "mock: reply=idle" }).then((s) => s.id));
    const got = await Promise.all(batch);
    ids.push(...got);
    await m.wait(got, { mode: "all", timeoutMs: 120_000 });
  }
  const crowded = await followUps(m, probe, n);
  await m.cancelMany([probe, ...ids]);
  return { n, idle, alone, crowded, target: { crowdedWithin: "1.25× alone (p50)" } };
}

export const idleChildrenRows = (r) => [
  [
    `follow-up → turn_started, 1 vs ${r.idle + 1} idle children`,
    `p50 ${r.alone.sendToTurnStarted.p50} ms vs ${r.crowded.sendToTurnStarted.p50} ms · p95 ${r.alone.sendToTurnStarted.p95} vs ${r.crowded.sendToTurnStarted.p95} ms (inotify ${r.alone.inotifyInUse} vs ${r.crowded.inotifyInUse})`,
    "no worse with many idle",
  ],
  [
    `follow-up → completion seen, 1 vs ${r.idle + 1} idle children`,
    `p50 ${r.alone.sendToCompletion.p50} ms vs ${r.crowded.sendToCompletion.p50} ms · p95 ${r.alone.sendToCompletion.p95} vs ${r.crowded.sendToCompletion.p95} ms`,
    "no worse with many idle",
  ],
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-idle-"));
  const socket = `mbi-${process.pid}`;
  startReaper(base, [socket]);
  const env = benchEnv(base, socket);
  const muster = (name) => {
    const cwd = path.join(base, name);
    fs.mkdirSync(cwd, { recursive: true });
    return createMuster({ env, cwd });
  };
  try {
    const r = await idleChildrenDelivery(
      muster,
      Number(process.argv[2] ?? 200),
      Number(process.argv[3] ?? 15),
    );
    for (const [name, result, target] of idleChildrenRows(r))
      console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
