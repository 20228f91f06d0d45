// Workflow scheduler overhead: a TOML workflow of n independent steps (all ready at once), run on mock
// children. For each step: ready → spawn called (the scheduler's own cost) and ready → child spawned (spawn
// returned: artifact dir, registry entry, pane). `node bench/workflow-scheduler.mjs [n]` runs it alone.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createMuster } from "../dist/index.js";
import { runWorkflow } from "../dist/workflows/dag/run.js";
import { parseWorkflow } from "../dist/workflows/dag/toml.js";
import { musterHost } from "../dist/workflows/host.js";
import { benchEnv, startReaper } from "./env.mjs";
import { pct, round } from "./stats.mjs";

/** Runs the workflow once; returns per-step latencies in ms. */
export async function schedulerOverhead(m, n) {
  const steps = Array.from(
    { length: n },
    (_, i) => `[[steps]]\nid = "s${i}"\nagent = "mock"\nprompt = "step ${i}\\nmock: reply=ok"\n`,
  ).join("");
  const def = parseWorkflow(`name = "bench"\n${steps}`, "bench");
  const inner = musterHost(m);
  const called = [];
  const spawned = [];
  let ready = 0;
  const host = {
    ...inner,
    spawn: async (o) => {
      called.push(performance.now() - ready);
      const r = await inner.spawn(o);
      spawned.push(performance.now() - ready);
      return r;
    },
  };
  const run = await runWorkflow(host, def, "", {
    onProgress: (p) => {
      // Every step is ready when the run has started: it has no needs.
      if (p.type === "run_started") ready = performance.now();
    },
  });
  if (run.status !== "completed") {
    const bad = run.steps.find((s) => s.status !== "completed");
    throw new Error(
      `bench workflow ${run.status}: step ${bad?.id} ${bad?.status}: ${JSON.stringify(bad).slice(0, 600)}`,
    );
  }
  await m.cancelMany(run.steps.map((s) => s.childId));
  return {
    steps: n,
    readyToSpawnCallMs: {
      p50: round(pct(called, 50), 2),
      p95: round(pct(called, 95), 2),
      max: round(Math.max(...called), 2),
    },
    readyToSpawnedMs: {
      p50: round(pct(spawned, 50)),
      p95: round(pct(spawned, 95)),
      max: round(Math.max(...spawned)),
    },
    perStepMs: round(Math.max(...spawned) / n, 1),
  };
}

export function schedulerRow(r) {
  return [
    `workflow scheduler, ${r.steps} ready steps`,
    `ready → spawn call p95 ${r.readyToSpawnCallMs.p95} ms · ready → spawned p50 ${r.readyToSpawnedMs.p50} ms, p95 ${r.readyToSpawnedMs.p95} ms (${r.perStepMs} ms/step)`,
    "-",
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv[2] ?? 64);
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-wf-"));
  const socket = `mbw-${process.pid}`;
  startReaper(base, [socket]);
  const env = benchEnv(base, socket);
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  try {
    console.log(JSON.stringify(await schedulerOverhead(createMuster({ env, cwd }), n), null, 2));
  } finally {
    const { spawnSync } = await import("node:child_process");
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
