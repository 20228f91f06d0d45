#!/usr/bin/env node
// Issue 9, item 26: does a child's host start stall under heavy load while an MCP parent waits?
// N sequential subagents_run calls (mock) through `muster mcp`, with LOAD busy processes on the cores.
// Every host that has not logged child_started after 3 s is dumped (host-starts.mjs): its state and wait
// channel, the tmux server's, and the MCP server's, so whatever holds it shows where it sleeps.
// Usage: node bench/stress-start.mjs [runs=25] [load=40]
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startReaper, withoutLineage } from "./env.mjs";
import { busyLoad, watchHostStarts } from "./host-starts.mjs";

const root = path.resolve(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 25);
const loadN = Number(process.argv[3] ?? 40);
const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-stress-"));
const socket = `mtstress${process.pid}`;
startReaper(base, [socket]);
// The default run-slot bound stays: the stall was seen with it.
const env = withoutLineage({
  ...process.env,
  MUSTER_HOME: path.join(base, "home"),
  MUSTER_TMUX_SOCKET: socket,
});
const cwd = path.join(base, "work");
fs.mkdirSync(cwd, { recursive: true });

const load = busyLoad(loadN);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, "bin", "muster.js"), "mcp"],
  env,
  cwd,
  stderr: "pipe",
});
transport.stderr?.on("data", () => {});
const client = new Client({ name: "stress", version: "0" });
const watch = watchHostStarts(env.MUSTER_HOME, socket);
const times = [];
try {
  await client.connect(transport);
  for (let i = 0; i < runs; i++) {
    const t0 = Date.now();
    const r = await client.callTool(
      { name: "subagents_run", arguments: { agent: "mock", prompt: `run ${i}\nmock: reply=ok${i}` } },
      undefined,
      { timeout: 600_000 },
    );
    const ms = Date.now() - t0;
    times.push(ms);
    const text = r.content?.[0]?.text ?? "";
    console.log(`run ${i}: ${ms} ms ${r.isError ? "ERROR " : ""}${text.split("\n")[0].slice(0, 100)}`);
  }
} finally {
  watch.stop();
  for (const p of load) p.kill("SIGKILL");
  await client.close().catch(() => {});
  try {
    execFileSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
  } catch {}
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `runs ${times.length}: p50 ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms, loadavg ${os.loadavg()[0].toFixed(1)}`,
  );
  fs.rmSync(base, { recursive: true, force: true });
}
