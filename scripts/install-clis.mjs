#!/usr/bin/env node
// Installs the pinned agent CLIs the e2e tests drive into a cache folder (never dependencies of the package).
// Usage: node scripts/install-clis.mjs [name …] [--json]   Cache: $MUSTER_CLI_CACHE or ~/.cache/muster/clis.
// Each CLI lands in <cache>/<name>-<version>/ via a temp folder + rename, so a broken install is never reused.
// All of them (the CLIs and the ACP adapters) install at once (npm's cache first: --prefer-offline), with a progress line every few seconds
// (MB fetched so far, from the temp folders' size), a timeout per install ($MUSTER_CLI_INSTALL_TIMEOUT
// seconds, default 600) and one retry; a failed, timed-out or interrupted install leaves no temp folder.
import * as fs from "node:fs";
import * as path from "node:path";
import { elapsed, installCli, progressLine } from "./install-lib.mjs";
import { cliCache, PINNED_CLIS } from "./pinned-clis.mjs";

const args = process.argv.slice(2);
const json = args.includes("--json");
const wanted = args.filter((a) => !a.startsWith("--"));
const unknown = wanted.filter((w) => !PINNED_CLIS.some((c) => c.name === w));
if (unknown.length > 0) {
  console.error(`unknown CLI ${unknown.join(", ")}; known: ${PINNED_CLIS.map((c) => c.name).join(", ")}`);
  process.exit(2);
}
const seconds = (name, fallback) => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`${name} must be a number of seconds > 0, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return n;
};
const timeoutMs = seconds("MUSTER_CLI_INSTALL_TIMEOUT", 600) * 1000;
const progressMs = seconds("MUSTER_CLI_PROGRESS_INTERVAL", 5) * 1000;

const cache = cliCache();
fs.mkdirSync(cache, { recursive: true });
const clis = PINNED_CLIS.filter((c) => wanted.length === 0 || wanted.includes(c.name));
const say = (s) => {
  if (!json) process.stderr.write(`${s}\n`);
};

const states = clis.map((cli) => {
  const dir = path.join(cache, `${cli.name}-${cli.version}`);
  const bin = path.join(dir, "node_modules", ".bin", cli.bin);
  const cached = fs.existsSync(path.join(dir, ".complete")) && fs.existsSync(bin);
  return {
    cli,
    dir,
    bin,
    name: cli.name,
    version: cli.version,
    state: cached ? "cached" : "pending",
    bytes: 0,
    attempt: 0,
  };
});
const todo = states.filter((s) => s.state !== "cached");
const started = Date.now();

// Ctrl-C or a kill: every install stops its npm (the whole process group) and removes its partial folder.
const controller = new AbortController();
let stoppedBy;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.once(sig, () => {
    stoppedBy = sig;
    const running = todo.filter((s) => s.state === "installing" || s.state === "retrying").length;
    say(`\n${sig}: stopping ${running} install(s) and removing their partial folders…`);
    controller.abort();
  });
}

if (todo.length > 0) {
  say(
    `installing ${todo.length} of ${states.length} pinned agent CLIs into ${cache} (~1.8 GB the first time; ` +
      `timeout ${elapsed(timeoutMs)} each, one retry): ${todo.map((s) => `${s.name}@${s.version}`).join(", ")}`,
  );
}
const ticker =
  todo.length > 0 ? setInterval(() => say(progressLine(states, started)), progressMs) : undefined;
await Promise.all(
  todo.map(async (s) => {
    const r = await installCli(s.cli, {
      cache,
      dir: s.dir,
      timeoutMs,
      signal: controller.signal,
      onUpdate: (u) => {
        if (u.state) s.state = u.state;
        if (u.attempt) s.attempt = u.attempt;
        if (u.bytes !== undefined) s.bytes = u.bytes;
        if (u.error) say(`${s.name}: ${u.error}${s.attempt < 2 ? " — retrying once" : ""}`);
      },
    });
    if (r.aborted) return;
    s.state = r.ok ? "done" : "failed";
    if (r.ok) s.bytes = r.bytes;
    else s.error = r.error;
    s.secs = ((Date.now() - started) / 1000).toFixed(1);
    say(
      `${s.name}@${s.version}: ${r.ok ? `installed in ${s.secs} s (${(r.bytes / 1048576).toFixed(1)} MB)` : `FAILED: ${r.error}`}`,
    );
  }),
);
if (ticker) clearInterval(ticker);
if (stoppedBy) {
  say(`stopped by ${stoppedBy}: no partial install is left in ${cache}`);
  process.exit(stoppedBy === "SIGINT" ? 130 : 143);
}

const results = states.map((s) =>
  s.state === "failed"
    ? { name: s.name, version: s.version, error: s.error }
    : {
        name: s.name,
        version: s.version,
        bin: s.bin,
        installed: s.state === "cached" ? "cached" : `${s.secs} s`,
      },
);
if (json) console.log(JSON.stringify(results, null, 2));
else for (const r of results) if (!r.error) console.error(`${r.name} ${r.version}: ${r.bin}`);
process.exit(results.some((r) => r.error) ? 1 : 0);
