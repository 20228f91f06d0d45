#!/usr/bin/env node
// "final record → waiter" with the real pinned agent CLIs against the scripted endpoint: from the moment the
// endpoint sent the model's last response to the moment a waiting parent has the turn's completion (the CLI
// reads the response, writes its final record, muster settles). Run after a build and scripts/install-clis.mjs:
// `node bench/final-record-clis.mjs [turns per CLI]`. CLIs that are not installed are skipped, saying so.
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

/** p50/p95 (ms) per installed CLI of: the endpoint's last response sent → the waiting parent has the completion. */
export async function finalRecordClis(n, log = (s) => process.stderr.write(`${s}\n`)) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-clis-"));
  const socket = `mbc-${process.pid}`;
  startReaper(base, [socket]);
  const results = {};
  const ep = await startEndpoint({ scenario: "text" });
  try {
    for (const name of ["claude", "codex", "pi", "gemini", "opencode"]) {
      const bin = cliBinDir(name);
      if (!fs.existsSync(path.join(bin, name))) {
        log(`${name}: not installed (node scripts/install-clis.mjs), skipped`);
        continue;
      }
      const { env, cwd } = cliBenchEnv(name, ep.url, path.join(base, name), base, socket);
      const m = createMuster({ env, cwd });
      const samples = [];
      for (let i = 0; i < n; i++) {
        const before = ep.requests.length;
        const s = await m.spawn({ agent: name, prompt: "say hi", model: TEST_MODELS[name], cwd });
        let at;
        const outcome = await m.wait([s.id], {
          mode: "all",
          timeoutMs: 120_000,
          onEvent: (_id, e) => {
            if (e.type === "completion") at ??= now();
          },
        });
        const last = ep.requests
          .slice(before)
          .filter((q) => q.api !== null && q.answeredAt)
          .at(-1);
        if (outcome.results[0]?.status !== "completed" || !last || at === undefined)
          throw new Error(`${name}: turn did not complete: ${JSON.stringify(outcome.results[0])}`);
        samples.push(at - last.answeredAt);
        await m.cancel(s.id);
      }
      results[name] = { n, p50: round(pct(samples, 50)), p95: round(pct(samples, 95)) };
    }
  } finally {
    await ep.close();
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
  return results;
}

export const finalRecordCliRow = (name, r) => [
  `final record → waiter, ${name} (last response → completion)`,
  `p50 ${r.p50} ms · p95 ${r.p95} ms`,
  "no wait for the CLI's exit",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const results = await finalRecordClis(Number(process.argv[2] ?? 5));
  for (const [name, r] of Object.entries(results))
    console.log(finalRecordCliRow(name, r).slice(0, 2).join("  "));
  console.log(JSON.stringify(results));
}
