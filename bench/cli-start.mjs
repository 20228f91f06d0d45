#!/usr/bin/env node
// "CLI start-up": `muster ls`, `status`, `result` and `send` against one settled mock child, each timed in runs
// paired with a bare `node -e 0` run next to it (the same machine load for both); the row is the median of the
// per-pair ratios, plus the medians in ms. Part of `npm run bench`; run alone: `node bench/cli-start.mjs [runs]`
// (after a build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { benchEnv } from "./env.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.join(import.meta.dirname, "..", "bin", "muster.js");

/** Wall time of one run in ms; throws when the command fails. */
function timed(argv, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { env, cwd, stdio: ["ignore", "ignore", "pipe"] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}: ${r.stderr}`);
  return ms;
}

/**
 * Paired runs of each command and `node -e 0`, in a folder of its own under `base`, on `node` (this one by
 * default). The first command (a spawn) runs this build once, so the runs timed start from its code cache
 * (src/util/code-cache.ts), as every run but a build's first does.
 */
export function cliStart(given, base, runs, node = process.execPath) {
  // As a user's shell has it: NODE_EXTRA_CA_CERTS (set on some machines, this one among them) makes every node
  // start load a CA bundle, ~35 ms on both sides of the ratio, which would flatter it.
  const env = { ...given };
  delete env.NODE_EXTRA_CA_CERTS;
  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
  const cwd = path.join(base, `cli-start-${version}`);
  fs.mkdirSync(cwd, { recursive: true });
  const cli = (args) => [node, BIN, ...args];
  const spawned = spawnSync(node, [BIN, "spawn", "--wait", "--json", "cli start-up"], {
    env,
    cwd,
    encoding: "utf8",
  });
  if (spawned.status !== 0) throw new Error(`spawn exited ${spawned.status}: ${spawned.stderr}`);
  const id = JSON.parse(spawned.stdout).results[0].id;
  const commands = {
    ls: ["ls"],
    status: ["status", id],
    result: ["result", id],
    // Queues a turn on the idle child each time (mock answers at once); `send` returns without waiting.
    send: ["send", id, "one more"],
  };
  const out = {};
  for (const [name, args] of Object.entries(commands)) {
    const bare = [];
    const cmd = [];
    const ratios = [];
    for (let i = 0; i < runs; i++) {
      const n = timed([node, "-e", "0"], env, cwd);
      const c = timed(cli(args), env, cwd);
      bare.push(n);
      cmd.push(c);
      ratios.push(c / n);
    }
    out[name] = { ratio: round(pct(ratios, 50), 2), ms: round(pct(cmd, 50)), nodeMs: round(pct(bare, 50)) };
  }
  spawnSync(node, [BIN, "rm", "--force", id], { env, cwd, stdio: "ignore" });
  return { runs, node: version, ...out, target: { ratio: 2 } };
}

export const cliStartRow = (r) => [
  `CLI start-up / node -e 0 (Node ${r.node.replace(/^v/, "")}), paired runs (median): ls · status · result · send`,
  `${r.ls.ratio} · ${r.status.ratio} · ${r.result.ratio} · ${r.send.ratio} (ls ${r.ls.ms} ms, node -e 0 ${r.ls.nodeMs} ms)`,
  "≤ 2",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-cli-"));
  const socket = `mbc-${process.pid}`;
  try {
    const r = cliStart(benchEnv(base, socket), base, Number(process.argv[2] ?? 15));
    const [name, result, target] = cliStartRow(r);
    console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
