#!/usr/bin/env node
// Runner mode session vs oneshot with the real pinned CLIs that have a session mode, against the
// scripted endpoint: follow-up latency (`send` → the turn's first model request at the endpoint) and delivery
// (the endpoint's last response → the waiting parent has the completion). Run after a build and
// scripts/install-clis.mjs: `node bench/session-clis.mjs [follow-ups per mode]`. Missing CLIs are skipped.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { cliBinDir } from "../scripts/pinned-clis.mjs";
import { TEST_MODELS } from "../test/fixtures/cli-setup.mjs";
import { startEndpoint } from "../test/fixtures/llm-endpoint.mjs";
import { cliBenchEnv, startReaper } from "./env.mjs";
import { now, pct, round } from "./stats.mjs";

const SESSION_CLIS = ["claude", "pi", "gemini", "opencode", "codex"];

const stats = (xs) => ({ n: xs.length, p50: round(pct(xs, 50)), p95: round(pct(xs, 95)) });

/** Per CLI and mode: {followUp, delivery} p50/p95 in ms over `n` follow-ups on one child. */
export async function sessionClis(n, log = (s) => process.stderr.write(`${s}\n`)) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-sess-"));
  const socket = `mbs-${process.pid}`;
  startReaper(base, [socket]);
  const results = {};
  const ep = await startEndpoint({ scenario: "text" });
  try {
    for (const name of SESSION_CLIS) {
      const bin = cliBinDir(name);
      if (!fs.existsSync(path.join(bin, name))) {
        log(`${name}: not installed (node scripts/install-clis.mjs), skipped`);
        continue;
      }
      results[name] = {};
      for (const mode of ["session", "oneshot"]) {
        const { env: cliEnv, cwd } = cliBenchEnv(name, ep.url, path.join(base, name, mode), base, socket);
        const env = { ...cliEnv, MUSTER_RUNNER_MODE: mode };
        const m = createMuster({ env, cwd });
        const s = await m.spawn({ agent: name, prompt: "say hi", model: TEST_MODELS[name], cwd });
        await m.wait([s.id], { mode: "all", timeoutMs: 120_000 });
        const followUp = [];
        const delivery = [];
        for (let i = 0; i < n; i++) {
          const before = ep.requests.length;
          const sentAt = now();
          const sent = await m.send(s.id, `follow-up ${i}`);
          let at;
          const outcome = await m.wait([s.id], {
            mode: "all",
            timeoutMs: 120_000,
            onEvent: (_id, e) => {
              if (e.type === "completion" && e.turnId === sent.turnId) at ??= now();
            },
          });
          const reqs = ep.requests.slice(before).filter((q) => q.api !== null);
          const last = reqs.filter((q) => q.answeredAt).at(-1);
          if (outcome.results[0]?.status !== "completed" || !reqs[0] || !last || at === undefined)
            throw new Error(
              `${name} (${mode}): follow-up did not complete: ${JSON.stringify(outcome.results[0])}`,
            );
          followUp.push(reqs[0].receivedAt - sentAt);
          delivery.push(at - last.answeredAt);
        }
        await m.cancel(s.id);
        results[name][mode] = { followUp: stats(followUp), delivery: stats(delivery) };
        log(`${name} ${mode}: follow-up p50 ${results[name][mode].followUp.p50} ms`);
      }
    }
  } finally {
    await ep.close();
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
  return results;
}

export const sessionCliRows = (name, r) =>
  ["session", "oneshot"].map((mode) => [
    `${name} ${mode}: follow-up → first model request / last response → waiter`,
    `p50 ${r[mode].followUp.p50} ms · p95 ${r[mode].followUp.p95} ms / p50 ${r[mode].delivery.p50} ms · p95 ${r[mode].delivery.p95} ms`,
    mode === "session" ? "session ≪ oneshot" : "(baseline)",
  ]);

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await sessionClis(Number(process.argv[2] ?? 5));
  for (const [name, r] of Object.entries(results))
    for (const row of sessionCliRows(name, r)) console.log(row.slice(0, 2).join("  "));
  console.log(JSON.stringify(results));
}
