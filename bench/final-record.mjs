#!/usr/bin/env node
// "final record → waiter": from the moment a child's agent writes its final record to the moment a waiting
// parent has the completion, one child at a time. The mock writes that moment as its answer (`mock: stamp`);
// with `linger` it stays alive after the record, as a CLI shutting down does (pi: ~110-150 ms) — a time the
// turn no longer waits for. Part of `npm run bench`; run alone: `node bench/final-record.mjs` (after a build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { startReaper } from "./env.mjs";
import { now, pct, round } from "./stats.mjs";

async function samples(m, n, linger) {
  const out = [];
  for (let i = 0; i < n + 1; i++) {
    const s = await m.spawn({ agent: "mock", prompt: `mock: stamp linger=${linger}` });
    let at;
    const outcome = await m.wait([s.id], {
      mode: "all",
      timeoutMs: 30_000,
      withText: true,
      onEvent: (_id, e) => {
        if (e.type === "completion") at ??= now();
      },
    });
    const text = outcome.results[0]?.text ?? "";
    const stamp = Number(/final-record-at ([\d.]+)/.exec(text)?.[1]);
    if (!Number.isFinite(stamp) || at === undefined)
      throw new Error(`no stamped completion: ${text.slice(0, 200)}`);
    if (i > 0) out.push(at - stamp); // the first child starts the tmux server: not a sample
  }
  return out;
}

/** p50/p95 (ms) for the mock, and for the mock lingering 120 ms after its final record. */
export async function finalRecordToWaiter(muster, n) {
  const plain = await samples(muster("final-record"), n, 0);
  const lingering = await samples(muster("final-record-linger"), n, 120);
  return {
    n,
    mock: { p50: round(pct(plain, 50)), p95: round(pct(plain, 95)) },
    mockLingering120ms: { p50: round(pct(lingering, 50)), p95: round(pct(lingering, 95)) },
    target: { p50: 50, lingeringAddsNothing: true },
  };
}

export const finalRecordRow = (r) => [
  "final record → waiter (mock · lingering 120 ms)",
  `p50 ${r.mock.p50} ms, p95 ${r.mock.p95} ms · p50 ${r.mockLingering120ms.p50} ms, p95 ${r.mockLingering120ms.p95} ms`,
  "p50 ≤ 50 ms; lingering adds nothing",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-final-"));
  const socket = `mbf-${process.pid}`;
  startReaper(base, [socket]);
  const env = { ...process.env, MUSTER_HOME: path.join(base, "home"), MUSTER_TMUX_SOCKET: socket };
  for (const k of ["TMUX", "TMUX_PANE", "MUSTER_PRIMARY", "MUSTER_CHILD_ID", "MUSTER_DEPTH"]) delete env[k];
  const muster = (name) => {
    const cwd = path.join(base, name);
    fs.mkdirSync(cwd, { recursive: true });
    return createMuster({ env, cwd });
  };
  try {
    const r = await finalRecordToWaiter(muster, Number(process.argv[2] ?? 20));
    const [name, result, target] = finalRecordRow(r);
    console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
