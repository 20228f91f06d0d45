#!/usr/bin/env node
// Issue 9, item 26: does a child's host start stall under heavy load while an MCP parent waits?
// N sequential subagents_run calls (mock) through `muster mcp`, with LOAD busy processes on the cores.
// Every host that has not logged child_started after 3 s is dumped: its state and wait channel, the tmux
// server's, and the MCP server's, so whatever holds it shows where it sleeps.
// Usage: node bench/stress-start.mjs [runs=25] [load=40]
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { withoutLineage } from "./env.mjs";

const root = path.resolve(import.meta.dirname, "..");
const runs = Number(process.argv[2] ?? 25);
const loadN = Number(process.argv[3] ?? 40);
const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-stress-"));
const socket = `mtstress${process.pid}`;
// The default run-slot bound stays: the stall was seen with it.
const env = withoutLineage({
  ...process.env,
  MUSTER_HOME: path.join(base, "home"),
  MUSTER_TMUX_SOCKET: socket,
});
const cwd = path.join(base, "work");
fs.mkdirSync(cwd, { recursive: true });

const load = Array.from({ length: loadN }, () =>
  spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }),
);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [path.join(root, "bin", "muster.js"), "mcp"],
  env,
  cwd,
  stderr: "pipe",
});
transport.stderr?.on("data", () => {});
const client = new Client({ name: "stress", version: "0" });
const wchan = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/wchan`, "utf8") || "-";
  } catch {
    return "gone";
  }
};
const dumped = new Set();
/** Hosts whose events have no child_started 3 s after their artifact dir appeared. */
function dumpStuck() {
  const arts = path.join(env.MUSTER_HOME, "primaries");
  let dirs = [];
  try {
    for (const p of fs.readdirSync(arts))
      for (const c of fs.readdirSync(path.join(arts, p, "artifacts")))
        dirs.push(path.join(arts, p, "artifacts", c));
  } catch {
    return;
  }
  dirs = dirs.filter((d) => !dumped.has(d));
  for (const d of dirs) {
    const ev = path.join(d, "events.ndjson");
    let text = "";
    try {
      text = fs.readFileSync(ev, "utf8");
    } catch {}
    if (text.includes('"child_started"')) continue;
    const age = Date.now() - fs.statSync(d).mtimeMs;
    if (age < 3000) continue;
    dumped.add(d);
    const ps = execFileSync("ps", ["-eo", "pid,ppid,stat,etimes,wchan:32,args"], { encoding: "utf8" })
      .split("\n")
      .filter((l) => l.includes(path.basename(d)) || l.includes(`tmux -L ${socket}`) || l.includes(" mcp"));
    console.log(`STUCK ${path.basename(d)} after ${age} ms:\n${ps.join("\n")}`);
    for (const l of ps) {
      const pid = l.trim().split(/\s+/)[0];
      try {
        console.log(`  ${pid} stack:\n${fs.readFileSync(`/proc/${pid}/stack`, "utf8")}`);
      } catch {}
      console.log(`  ${pid} wchan ${wchan(pid)}`);
    }
  }
}
const monitor = setInterval(dumpStuck, 1000);
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
  clearInterval(monitor);
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
