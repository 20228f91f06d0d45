#!/usr/bin/env node
// "muster web": a real `muster web` process with its page open in the system's headless Chromium
// (playwright-core). (1) Event → browser: 32 mock children finishing at staggered times; for each, the ts of its
// `completion` record in its events.ndjson → the moment the page's row shows its settled state (a
// MutationObserver in the page, on the same wall clock: one machine). Beside it: the ts → a core watcher in a
// process of its own has the record (what the server's watcher needs first), → the page receives the SSE `tree`
// event carrying it (the server sends a status move within 40 ms of its last update, other events at most one
// update per 250 ms), → the row shows it. (2) The web server's CPU (/proc/<pid>/stat, user + system) with 64 idle
// children in the open, connected page, measured 30 s or more after the server started (as the top row: past
// V8's one-off heap shrink). The page's renderer is not measured. No Chromium: the rows say "skipped".
// Part of `npm run bench`; run alone (after a build): `node bench/web.mjs [seconds=10]`.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { createMuster } from "../dist/index.js";
import { benchEnv, killServer, startReaper } from "./env.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.join(import.meta.dirname, "..", "bin", "muster.js");
const TICK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The server's window from its start before CPU is measured (V8's heap shrink falls ~20-25 s after start).
const STEADY_AFTER_MS = 30_000;

/** user + system CPU of a process, in ms. */
function cpuMs(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
}

/** The system Chromium (MUSTER_CHROMIUM, else `chromium` on PATH), or undefined. */
export function findChromium() {
  if (process.env.MUSTER_CHROMIUM)
    return fs.existsSync(process.env.MUSTER_CHROMIUM) ? process.env.MUSTER_CHROMIUM : undefined;
  const r = spawnSync("which", ["chromium"], { encoding: "utf8" });
  const found = r.status === 0 ? r.stdout.trim() : "";
  return found || undefined;
}

async function until(what, fn, timeoutMs, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`web bench: timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** `muster web` on a free loopback port in `cwd`; resolves once it printed its URL. */
async function startServer(cwd, env, tokenFile) {
  const proc = spawn(process.execPath, [BIN, "web", "--listen", "127.0.0.1:0", "--token-file", tokenFile], {
    cwd,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const startedAt = Date.now();
  let said = "";
  proc.stderr.on("data", (d) => {
    if (said.length < 64_000) said += d.toString();
  });
  const exited = new Promise((r) => proc.once("exit", r));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const late = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(late);
  };
  try {
    const m = await until(
      "muster web's URL",
      () => {
        if (proc.exitCode !== null) throw new Error(`muster web exited ${proc.exitCode}: ${said.trim()}`);
        return /http:\/\/127\.0\.0\.1:(\d+)\/\?token=(\S+)/.exec(said);
      },
      30_000,
      50,
    );
    return { pid: proc.pid, port: Number(m[1]), token: m[2], startedAt, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

// Runs in the page before its own script: each SSE `tree` event's arrival, and per child the first arrival
// carrying each live state (our listener is added first, so it runs before the page renders the event).
function recordArrivals() {
  const seen = {};
  window.__bench = { arrivals: 0, seen, shown: {} };
  const Original = window.EventSource;
  window.EventSource = class extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener("tree", (ev) => {
        const at = performance.timeOrigin + performance.now();
        window.__bench.arrivals += 1;
        for (const c of JSON.parse(ev.data).children) {
          const s = c.live?.state ?? c.status;
          seen[c.id] ??= {};
          seen[c.id][s] ??= at;
        }
      });
    }
  };
}

// Runs in the page: the first moment each row's state text reads each value (rows are redrawn on every update).
function observeRows() {
  const shown = window.__bench.shown;
  const look = () => {
    const at = performance.timeOrigin + performance.now();
    for (const row of document.querySelectorAll("[data-testid=child][data-id]")) {
      const s = row.querySelector("[data-testid=state]")?.textContent ?? "";
      const id = row.getAttribute("data-id");
      shown[id] ??= {};
      shown[id][s] ??= at;
    }
  };
  new MutationObserver(look).observe(document.getElementById("tree"), {
    childList: true,
    subtree: true,
    characterData: true,
  });
  look();
}

// A core watcher in a process of its own, as the server's is (one in the process that spawns sees a new
// child's events file already made): prints when it has each completion.
const WATCHER = `import { createMuster } from ${JSON.stringify(pathToFileURL(path.join(import.meta.dirname, "..", "dist", "index.js")).href)};
const m = createMuster({ cwd: process.cwd() });
const w = await m.watch({ onEvent: (id, e) => {
  if (e.type === "completion") process.stdout.write(JSON.stringify({ id, at: performance.timeOrigin + performance.now() }) + "\\n");
} });
process.stdout.write("ready\\n");
process.stdin.on("end", () => void w.close().then(() => process.exit(0)));
process.stdin.resume();`;

/** Starts WATCHER in `cwd`; `seen` maps a child to when that watcher had its first completion. */
async function startWatcher(cwd, env) {
  const proc = spawn(process.execPath, ["--input-type=module", "-e", WATCHER], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const seen = new Map();
  let ready = false;
  let buf = "";
  proc.stdout.on("data", (d) => {
    buf += d.toString();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line === "ready") ready = true;
      else if (line) {
        const { id, at } = JSON.parse(line);
        if (!seen.has(id)) seen.set(id, at);
      }
    }
  });
  const exited = new Promise((r) => proc.once("exit", r));
  const stop = async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.stdin.end();
    const late = setTimeout(() => proc.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(late);
  };
  await until(
    "the watcher process",
    () => {
      if (proc.exitCode !== null) throw new Error(`the watcher process exited ${proc.exitCode}`);
      return ready;
    },
    30_000,
    50,
  ).catch(async (e) => {
    await stop();
    throw e;
  });
  return { seen, stop };
}

/** The ts (ms since the epoch) of the last `completion` record in a child's events file. */
function completionTs(artifactDir) {
  const lines = fs.readFileSync(path.join(artifactDir, "events.ndjson"), "utf8").split("\n");
  let ts;
  for (const line of lines) {
    try {
      const e = JSON.parse(line);
      if (e.type === "completion") ts = Date.parse(e.ts);
    } catch {}
  }
  if (ts === undefined) throw new Error(`web bench: no completion in ${artifactDir}`);
  return ts;
}

const stats = (xs) => ({ p50: round(pct(xs, 50)), p95: round(pct(xs, 95)), max: round(Math.max(...xs)) });

/** Both web rows; `{ skipped }` when there is no Chromium. */
export async function webBench(muster, env, { seconds = 10, n = 32, idle = 64, log = () => {} } = {}) {
  const executablePath = findChromium();
  if (!executablePath) return { skipped: "no chromium" };
  const { chromium } = await import("playwright-core");
  const m = muster("web");
  const tokenFile = path.join(m.cwd, "..", "web-token");
  const server = await startServer(m.cwd, env, tokenFile);
  let context;
  let watcher;
  const ids = [];
  try {
    // Its profile under the bench's temp dir: the reaper ends the browser too if the bench is killed.
    context = await chromium.launchPersistentContext(path.join(m.cwd, "..", "web-profile"), {
      executablePath,
      args: ["--no-sandbox"],
      viewport: { width: 1200, height: 2400 },
    });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.addInitScript(recordArrivals);
    await page.goto(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    await page.getByTestId("conn").filter({ hasText: "live" }).waitFor({ timeout: 30_000 });
    await page.evaluate(observeRows);

    // (1) n children settling at staggered times, ~200 ms apart (plus each spawn's own time).
    watcher = await startWatcher(m.cwd, env);
    const spawned = [];
    for (let i = 0; i < n; i++) {
      const s = await m.spawn({ agent: "mock", prompt: `mock: sleep=${(2 + i * 0.2).toFixed(1)}` });
      spawned.push(s);
      ids.push(s.id);
    }
    const outcome = await m.wait(ids, { mode: "all", timeoutMs: 180_000 });
    if (outcome.results.length !== n) throw new Error(`web bench: ${outcome.results.length}/${n} settled`);
    // Settled: each row reads what the core's view says now (the page's last update is in).
    const rowStates = () =>
      page.evaluate(() =>
        Object.fromEntries(
          [...document.querySelectorAll("[data-testid=child][data-id]")].map((r) => [
            r.getAttribute("data-id"),
            r.querySelector("[data-testid=state]")?.textContent ?? "",
          ]),
        ),
      );
    let rows = {};
    let views = new Map();
    const settled = await until(
      "the page to show every child settled",
      async () => {
        views = new Map((await m.views()).map((v) => [v.id, v.live?.state ?? v.status]));
        rows = await rowStates();
        return ids.every((id) => rows[id] === views.get(id)) && views;
      },
      30_000,
      200,
    ).catch((e) => {
      const off = ids.filter((id) => rows[id] !== views.get(id));
      throw new Error(
        `${e.message}: ${off.map((id) => `${id} shows ${rows[id]}, is ${views.get(id)}`).join("; ")}`,
      );
    });
    const bench = await page.evaluate(() => window.__bench);
    const toShown = [];
    const toWatcher = [];
    const toArrival = [];
    const arrivalToShown = [];
    for (const s of spawned) {
      const ts = completionTs(s.artifactDir);
      const state = settled.get(s.id);
      const shown = bench.shown[s.id][state];
      const arrived = bench.seen[s.id]?.[state];
      toShown.push(shown - ts);
      if (watcher.seen.has(s.id)) toWatcher.push(watcher.seen.get(s.id) - ts);
      if (arrived !== undefined) {
        toArrival.push(arrived - ts);
        arrivalToShown.push(shown - arrived);
      }
    }
    await watcher.stop();
    watcher = undefined;
    log(`web: event → page p50 ${round(pct(toShown, 50))} ms; now ${idle} idle children…`);

    // (2) idle children, the page open on them: the server's CPU in its steady state.
    for (let i = n; i < idle; i++) {
      const s = await m.spawn({ agent: "mock", prompt: "mock: reply=idle" });
      ids.push(s.id);
    }
    await m.wait(ids, { mode: "all", timeoutMs: 180_000 });
    await until(
      `the page to show ${idle} children`,
      () => page.evaluate((k) => document.querySelectorAll("[data-testid=child]").length >= k, idle),
      30_000,
    );
    await sleep(Math.max(3000, STEADY_AFTER_MS - (Date.now() - server.startedAt)));
    const arrivals0 = await page.evaluate(() => window.__bench.arrivals);
    const c0 = cpuMs(server.pid);
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const used = cpuMs(server.pid) - c0;
    const wall = performance.now() - t0;
    const updates = (await page.evaluate(() => window.__bench.arrivals)) - arrivals0;
    const rowsInPage = await page.evaluate(() => document.querySelectorAll("[data-testid=child]").length);
    return {
      latencyMs: {
        n,
        eventToPage: stats(toShown),
        eventToCoreWatcher: toWatcher.length ? stats(toWatcher) : null,
        eventToSseArrival: toArrival.length ? stats(toArrival) : null,
        sseArrivalToRowShown: arrivalToShown.length ? stats(arrivalToShown) : null,
        coalesceMs: 250,
        statusCoalesceMs: 40,
      },
      idleCpu: {
        children: idle,
        rowsInPage,
        windowMs: Math.round(wall),
        cpuMs: round(used),
        percentOfOneCore: round((used / wall) * 100, 2),
        updatesSentInWindow: updates,
      },
    };
  } finally {
    await watcher?.stop();
    await context?.close().catch((e) => log(`web: closing the browser: ${e.message}`));
    await server.stop();
    if (ids.length) await m.cancelMany(ids, { graceMs: 2000 }).catch((e) => log(`web: cancel: ${e.message}`));
    fs.rmSync(tokenFile, { force: true });
    fs.rmSync(path.join(m.cwd, "..", "web-profile"), { recursive: true, force: true });
  }
}

export const webRows = (r) =>
  r.skipped
    ? [
        ["muster web: event → page, 32 children", `skipped: ${r.skipped}`, "p95 ≤ 500 ms"],
        ["muster web server CPU, 64 idle children in the page", `skipped: ${r.skipped}`, "≤ 1 %"],
      ]
    : [
        [
          `muster web: event ts → row shown in Chromium, ${r.latencyMs.n} children`,
          `p50 ${r.latencyMs.eventToPage.p50} ms · p95 ${r.latencyMs.eventToPage.p95} ms · max ${r.latencyMs.eventToPage.max} ms (→ a core watcher p50 ${r.latencyMs.eventToCoreWatcher?.p50} ms, → SSE in page p50 ${r.latencyMs.eventToSseArrival?.p50} ms, a status move within ${r.latencyMs.statusCoalesceMs} ms of the last update, other events one per ${r.latencyMs.coalesceMs} ms)`,
          "p95 ≤ 500 ms",
        ],
        [
          `muster web server CPU, ${r.idleCpu.children} idle children in the page (${r.idleCpu.windowMs / 1000} s)`,
          `${r.idleCpu.percentOfOneCore} % of one core (${r.idleCpu.updatesSentInWindow} updates sent)`,
          "≤ 1 %",
        ],
      ];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-web-"));
  const socket = `mbw-${process.pid}`;
  startReaper(base, [socket]);
  const env = benchEnv(base, socket);
  const muster = (name) => {
    const cwd = path.join(base, name);
    fs.mkdirSync(cwd, { recursive: true });
    return createMuster({ env, cwd });
  };
  try {
    const r = await webBench(muster, env, {
      seconds: Number(process.argv[2] ?? 10),
      log: (s) => process.stderr.write(`${s}\n`),
    });
    for (const [name, result, target] of webRows(r)) console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    await killServer(socket, { under: base }).catch((e) => console.error(e.message));
    fs.rmSync(base, { recursive: true, force: true });
  }
}
