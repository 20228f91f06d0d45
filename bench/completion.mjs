#!/usr/bin/env node
// The completion-latency row alone: N children append their completion at one instant; latency = the
// completion's ts → the waiter has it. Usage: node bench/completion.mjs [children=32] [rounds=3]
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { benchEnv, startReaper } from "./env.mjs";
import { pct } from "./stats.mjs";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One round: n children gated on one file; every completion's ts → the moment the waiter saw it. */
export async function completionRound(m, dir, n, spawnOpts = {}) {
  const gate = path.join(dir, `gate-${Date.now()}`);
  const ids = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (
        await m.spawn({
          agent: "mock",
          prompt: `mock: gate=${encodeURIComponent(gate)} reply=done`,
          ...spawnOpts,
        })
      ).id,
    );
  await sleep(1500); // let the last mocks reach the gate
  setTimeout(() => fs.writeFileSync(gate, "go"), 200);
  const samples = [];
  const outcome = await m.wait(ids, {
    mode: "all",
    timeoutMs: 60_000,
    onEvent: (_id, e) => {
      if (e.type === "completion") samples.push(Date.now() - Date.parse(e.ts));
    },
  });
  if (outcome.results.length !== n) throw new Error(`only ${outcome.results.length}/${n} completed`);
  await m.cancelMany(ids);
  return samples;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 32);
  const rounds = Number(process.argv[3] ?? 3);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-completion-"));
  const socket = `mbc-${process.pid}`;
  startReaper(base, [socket]);
  const env = benchEnv(base, socket);
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  const m = createMuster({ env, cwd });
  try {
    for (let r = 0; r < rounds; r++) {
      const s = await completionRound(m, base, n);
      console.log(`round ${r + 1}: p50 ${pct(s, 50)} ms · p95 ${pct(s, 95)} ms · max ${Math.max(...s)} ms`);
    }
  } finally {
    const { execFileSync } = await import("node:child_process");
    try {
      execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    } catch {}
    fs.rmSync(base, { recursive: true, force: true });
  }
}
