#!/usr/bin/env node
// Installs the pinned agent CLIs the e2e tests drive into a cache folder (never dependencies of the package).
// Usage: node scripts/install-clis.mjs [name …] [--json]   Cache: $MUSTER_CLI_CACHE or ~/.cache/muster/clis.
// Each CLI lands in <cache>/<name>-<version>/ via a temp folder + rename, so a broken install is never reused.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cliCache, PINNED_CLIS } from "./pinned-clis.mjs";

const args = process.argv.slice(2);
const json = args.includes("--json");
const wanted = args.filter((a) => !a.startsWith("--"));
const unknown = wanted.filter((w) => !PINNED_CLIS.some((c) => c.name === w));
if (unknown.length > 0) {
  console.error(`unknown CLI ${unknown.join(", ")}; known: ${PINNED_CLIS.map((c) => c.name).join(", ")}`);
  process.exit(2);
}
const cache = cliCache();
fs.mkdirSync(cache, { recursive: true });
const results = [];
let failed = 0;
for (const cli of PINNED_CLIS.filter((c) => wanted.length === 0 || wanted.includes(c.name))) {
  const dir = path.join(cache, `${cli.name}-${cli.version}`);
  const bin = path.join(dir, "node_modules", ".bin", cli.bin);
  if (fs.existsSync(path.join(dir, ".complete")) && fs.existsSync(bin)) {
    results.push({ name: cli.name, version: cli.version, bin, installed: "cached" });
    continue;
  }
  const started = Date.now();
  if (!json) process.stderr.write(`installing ${cli.pkg}@${cli.version} into ${dir} … `);
  const tmp = fs.mkdtempSync(path.join(cache, `.${cli.name}-`));
  fs.writeFileSync(path.join(tmp, "package.json"), '{"private":true}\n');
  const r = spawnSync(
    "npm",
    ["install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error", `${cli.pkg}@${cli.version}`],
    { cwd: tmp, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } },
  );
  if (r.status !== 0 || !fs.existsSync(path.join(tmp, "node_modules", ".bin", cli.bin))) {
    fs.rmSync(tmp, { recursive: true, force: true });
    const why = (r.stderr || r.error?.message || `exit ${r.status}`).trim().split("\n").pop();
    if (!json) process.stderr.write(`failed: ${why}\n`);
    results.push({ name: cli.name, version: cli.version, error: why });
    failed += 1;
    continue;
  }
  fs.writeFileSync(path.join(tmp, ".complete"), `${new Date().toISOString()}\n`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(tmp, dir);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (!json) process.stderr.write(`done in ${secs} s\n`);
  results.push({ name: cli.name, version: cli.version, bin, installed: `${secs} s` });
}
if (json) console.log(JSON.stringify(results, null, 2));
else for (const r of results) if (!r.error) console.error(`${r.name} ${r.version}: ${r.bin}`);
process.exit(failed > 0 ? 1 : 0);
