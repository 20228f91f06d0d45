#!/usr/bin/env node
// Each backend side by side (tmux, pty): spawn() → the parent has the child's first event, and the agent's
// final record → a waiting parent has the completion. Samples alternate between the backends, one child at
// a time, so a change of load on the machine falls on both alike. Part of `npm run bench`; run alone:
// `node bench/backends.mjs [n]` (after a build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { benchEnv, startReaper } from "./env.mjs";
import { now, pct, round } from "./stats.mjs";

export const BACKENDS = ["tmux", "pty"];
const SETTLE_MS = 500;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One child: spawn → first event seen, final record → completion seen; then its pane is closed. */
async function sample(m) {
  const t0 = now();
  const s = await m.spawn({ agent: "mock", prompt: "mock: stamp" });
  let first;
  let done;
  const outcome = await m.wait([s.id], {
    mode: "all",
    timeoutMs: 30_000,
    withText: true,
    onEvent: (_id, e) => {
      first ??= now();
      if (e.type === "completion") done ??= now();
    },
  });
  const stamp = Number(/final-record-at ([\d.]+)/.exec(outcome.results[0]?.text ?? "")?.[1]);
  if (!Number.isFinite(stamp) || first === undefined || done === undefined)
    throw new Error(`no stamped completion from ${s.backend}`);
  await m.cancel(s.id);
  // tmux's kill-pane returns before the pane's processes are gone (pty's waits for its holder): let them
  // go, so that one backend's teardown does not fall on the other's next sample.
  await sleep(SETTLE_MS);
  return { firstEvent: first - t0, toWaiter: done - stamp };
}

const summary = (xs) => ({ p50: round(pct(xs, 50)), p95: round(pct(xs, 95)) });

/** p50/p95 (ms) of both measures for each backend; `muster(backend)` makes a Muster whose default is it. */
export async function backendLatency(muster, n) {
  const ms = Object.fromEntries(BACKENDS.map((b) => [b, muster(b)]));
  const got = Object.fromEntries(BACKENDS.map((b) => [b, { firstEvent: [], toWaiter: [] }]));
  for (let i = 0; i < n + 1; i++) {
    for (const b of BACKENDS) {
      const r = await sample(ms[b]);
      if (i === 0) continue; // the first child starts the tmux server: not a sample
      got[b].firstEvent.push(r.firstEvent);
      got[b].toWaiter.push(r.toWaiter);
    }
  }
  const out = { n };
  for (const b of BACKENDS)
    out[b] = { spawnToFirstEvent: summary(got[b].firstEvent), finalRecordToWaiter: summary(got[b].toWaiter) };
  out.target = { ptyNoSlowerThanTmux: true };
  return out;
}

export const backendRows = (r) =>
  BACKENDS.map((b) => [
    `${b}: spawn → first event · final record → waiter`,
    `p50 ${r[b].spawnToFirstEvent.p50} ms, p95 ${r[b].spawnToFirstEvent.p95} ms · p50 ${r[b].finalRecordToWaiter.p50} ms, p95 ${r[b].finalRecordToWaiter.p95} ms`,
    "pty no slower than tmux",
  ]);

/** A Muster per backend over one state root and private tmux server. */
export function musterPerBackend(base, env) {
  return (backend) => {
    const cwd = path.join(base, `backend-${backend}`);
    fs.mkdirSync(cwd, { recursive: true });
    return createMuster({ env: { ...env, MUSTER_BACKEND: backend }, cwd });
  };
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-backends-"));
  const socket = `mbb-${process.pid}`;
  startReaper(base, [socket]);
  try {
    const r = await backendLatency(
      musterPerBackend(base, benchEnv(base, socket)),
      Number(process.argv[2] ?? 20),
    );
    for (const [name, result, target] of backendRows(r))
      console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
