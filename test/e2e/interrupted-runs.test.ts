// A benchmark or the demo ended by a signal (a timeout's SIGTERM) leaves nothing running: no tmux server, no
// child host, no agent.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { BIN, processesMentioning, REPO, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-intr");
const started: ChildProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) if (p.exitCode === null) p.kill("SIGKILL");
});

const hostsUnder = (dir: string) =>
  processesMentioning(dir).filter((p) => p.cmdline.includes("host.bundle.js"));
const exited = (p: ChildProcess) =>
  new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once("exit", () => r())));

describe("interrupted by SIGTERM", () => {
  it("a benchmark: its private tmux server, child hosts and temp dir are gone", async () => {
    const tmp = path.join(path.dirname(sb.home), "bench-tmp");
    fs.mkdirSync(tmp);
    const env = { ...sb.env, TMPDIR: tmp };
    delete env.MUSTER_HOME;
    delete env.MUSTER_TMUX_SOCKET;
    const bench = spawn(process.execPath, [path.join(REPO, "bench", "completion.mjs"), "3", "1"], {
      env,
      stdio: "ignore",
    });
    started.push(bench);
    await until(() => hostsUnder(tmp).length >= 3, 60_000, 100);
    bench.kill("SIGTERM");
    await exited(bench);
    await until(() => processesMentioning(tmp).length === 0, 30_000, 100);
    const server = spawnSync("tmux", ["-L", `mbc-${bench.pid}`, "list-sessions"], { stdio: "ignore" });
    expect(server.status).not.toBe(0);
    // Nor its socket file.
    const socketDir = path.join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.()}`);
    expect(fs.existsSync(path.join(socketDir, `mbc-${bench.pid}`))).toBe(false);
    await until(() => fs.readdirSync(tmp).length === 0, 10_000, 100);
  }, 120_000);

  it("the demo: its three children are closed and removed", async () => {
    const demo = spawn(process.execPath, [BIN, "demo"], { cwd: sb.cwd, env: sb.env, stdio: "ignore" });
    started.push(demo);
    await until(() => hostsUnder(sb.home).length >= 3, 60_000, 100);
    demo.kill("SIGTERM");
    await exited(demo);
    await until(() => hostsUnder(sb.home).length === 0, 30_000, 100);
    expect((await sb.json(["ls"])).data.children).toEqual([]);
  }, 120_000);
});
