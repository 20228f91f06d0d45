#!/usr/bin/env node
// Issue 9, item 26, in the setting it was seen in: a real `claude -p` parent whose model calls muster's
// subagents_run N times in a row (one tool call after another, each waiting for its child), each child a
// real headless `pi`, one scripted endpoint, LOAD busy processes on the cores. Every child's host start
// (pane created → child_started) is timed; a host not started after 3 s is dumped with the wait channels
// of its processes, the tmux server's and the MCP server's.
// Usage: node bench/stress-start-claude.mjs [runs=25] [load=45]   (needs the pinned CLIs: scripts/install-clis.mjs)
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cliBinDir } from "../scripts/pinned-clis.mjs";
import { prepareCli } from "../test/fixtures/cli-setup.mjs";
import { startEndpoint } from "../test/fixtures/llm-endpoint.mjs";
import { startReaper, withoutLineage } from "./env.mjs";
import { busyLoad, watchHostStarts } from "./host-starts.mjs";

const root = path.resolve(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 25);
const loadN = Number(process.argv[3] ?? 45);
const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-stress-claude-"));
const home = path.join(base, "home");
const cwd = path.join(base, "work");
fs.mkdirSync(cwd, { recursive: true });
fs.mkdirSync(home, { recursive: true });
const socket = `mtstressc${process.pid}`;
startReaper(base, [socket]);
const ep = await startEndpoint();
// The default run-slot bound stays: the stall was seen with it.
const env = withoutLineage({ ...process.env });
Object.assign(env, {
  HOME: home,
  MUSTER_HOME: path.join(base, "muster"),
  MUSTER_TMUX_SOCKET: socket,
  ...prepareCli("claude", ep.url, home),
  ...prepareCli("pi", ep.url, home),
  CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
  PATH: [cliBinDir("claude"), cliBinDir("pi"), env.PATH].join(path.delimiter),
  PWD: cwd,
  TMPDIR: path.join(base, "tmp"),
});
fs.mkdirSync(env.TMPDIR, { recursive: true });
const muster = (args) =>
  execFileSync(process.execPath, [path.join(root, "bin", "muster.js"), ...args], {
    cwd,
    env,
    encoding: "utf8",
  });
muster(["mcp", "install", "claude", "--user"]);

// `muster mcp install` sets alwaysLoad on muster's server: Claude Code waits for it before its first request.
const steps = Array.from({ length: runs }, (_, i) => ({
  tool: "subagents_run",
  args: { agent: "pi", model: "local:scripted", prompt: `stress task ${i + 1}` },
}));
ep.setScenario("mcp", steps);

const load = busyLoad(loadN);
const watch = watchHostStarts(env.MUSTER_HOME, socket);
const seen = watch.seen;

const t0 = Date.now();
const claude = spawn(
  path.join(cliBinDir("claude"), "claude"),
  [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--model",
    "claude-sonnet-4-5",
    "--",
    "delegate these",
  ],
  {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  },
);
let out = "";
const collect = (d) => {
  out += d;
};
claude.stdout.on("data", collect);
claude.stderr.on("data", collect);
const progress = setInterval(() => {
  const done = [...seen.values()].filter((s) => s.done).length;
  process.stderr.write(
    `  ${Math.round((Date.now() - t0) / 1000)} s: ${seen.size} children, ${done} done, load ${os.loadavg()[0].toFixed(1)}\n`,
  );
}, 15_000);
const code = await new Promise((r) => claude.on("exit", r));
clearInterval(progress);
watch.stop();
for (const p of load) p.kill("SIGKILL");

const startMs = watch.startMs();
const pct = (q) => startMs[Math.min(startMs.length - 1, Math.floor(q * startMs.length))];
console.log(
  `claude exited ${code} after ${Math.round((Date.now() - t0) / 1000)} s; ${seen.size} children, ${[...seen.values()].filter((s) => s.status === "completed").length} completed`,
);
console.log(
  `pane created → child_started: p50 ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${startMs.at(-1)} ms; never started: ${[...seen.values()].filter((s) => !s.started).length}`,
);
if (code !== 0 || seen.size < runs) console.log(out.slice(-3000));
try {
  execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
} catch {}
await ep.close();
fs.rmSync(base, { recursive: true, force: true });
