// scripts/install-clis.mjs against a fake npm (test/fixtures/fake-npm/npm) that hangs, fails or succeeds:
// the timeout, the retry, the cleanup of partial installs and Ctrl-C. Never the real CLIs (cached elsewhere).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { pidAlive, REPO, until } from "../helpers/cli.js";

const SCRIPT = path.join(REPO, "scripts", "install-clis.mjs");
const FAKE_NPM = path.join(REPO, "test", "fixtures", "fake-npm");
const base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-install-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function setup(name: string, plan: string, extra: NodeJS.ProcessEnv = {}) {
  const dir = path.join(base, name);
  fs.mkdirSync(dir);
  const counter = path.join(dir, "calls");
  const cache = path.join(dir, "cache");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${FAKE_NPM}${path.delimiter}${process.env.PATH}`,
    MUSTER_CLI_CACHE: cache,
    FAKE_NPM_COUNTER: counter,
    FAKE_NPM_PLAN: plan,
    FAKE_NPM_BIN: "pi",
    MUSTER_CLI_INSTALL_TIMEOUT: "1.5",
    MUSTER_CLI_PROGRESS_INTERVAL: "0.3",
    ...extra,
  };
  const calls = () => (fs.existsSync(counter) ? Number(fs.readFileSync(counter, "utf8")) : 0);
  const pids = () =>
    fs.existsSync(`${counter}.pids`)
      ? fs.readFileSync(`${counter}.pids`, "utf8").split("\n").filter(Boolean).map(Number)
      : [];
  const argvs = () =>
    fs
      .readFileSync(`${counter}.argv`, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as string[]);
  const leftovers = () =>
    fs.existsSync(cache) ? fs.readdirSync(cache).filter((f) => f.startsWith(".")) : [];
  return { env, cache, calls, pids, argvs, leftovers };
}

describe("install-clis: timeout, retry, cleanup", () => {
  it("an install that hangs is killed at the timeout, retried once, then fails clearly with nothing left behind", async () => {
    const s = setup("hang", "hang");
    const r = await execa(process.execPath, [SCRIPT, "pi"], { env: s.env, reject: false, timeout: 60_000 });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(
      /pi: npm install @mariozechner\/pi-coding-agent@[\d.]+ timed out after 1\.5 s \(2\.0 MB fetched\).* retrying once/,
    );
    expect(r.stderr).toMatch(/pi@[\d.]+: FAILED: .*timed out.*MUSTER_CLI_INSTALL_TIMEOUT.*\(tried 2 times\)/);
    // Progress while it ran: which of how many, and the MB its temp folder holds.
    expect(r.stderr).toMatch(/agent CLIs: 0 of 1 finished, .* · 1\/1 pi@[\d.]+ 2\.0 MB/);
    expect(s.calls()).toBe(2);
    expect(s.leftovers()).toEqual([]);
    for (const pid of s.pids()) expect(pidAlive(pid)).toBe(false);
    expect(s.argvs()[0]).toContain("--prefer-offline");
  });

  it("a retry that succeeds installs the CLI; a failing npm says why", async () => {
    const ok = setup("retry-ok", "hang,ok");
    const r = await execa(process.execPath, [SCRIPT, "pi", "--json"], {
      env: ok.env,
      reject: false,
      timeout: 60_000,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const [res] = JSON.parse(r.stdout);
    expect(res.bin).toMatch(/pi-[\d.]+\/node_modules\/\.bin\/pi$/);
    expect(fs.existsSync(path.join(path.dirname(res.bin), "..", "..", ".complete"))).toBe(true);
    expect(ok.leftovers()).toEqual([]);
    const again = await execa(process.execPath, [SCRIPT, "pi", "--json"], { env: ok.env, reject: false });
    expect(JSON.parse(again.stdout)[0].installed).toBe("cached");
    expect(ok.calls()).toBe(2);

    const bad = setup("fail", "fail");
    const f = await execa(process.execPath, [SCRIPT, "pi"], { env: bad.env, reject: false, timeout: 60_000 });
    expect(f.exitCode).toBe(1);
    expect(f.stderr).toMatch(
      /FAILED: npm install .* failed \(exit 1\): npm error 404 Not Found - fake registry \(tried 2 times\)/,
    );
    expect(bad.leftovers()).toEqual([]);
  });

  it("installs in parallel; Ctrl-C stops every npm and removes the partial installs", async () => {
    const s = setup("sigint", "hang", { MUSTER_CLI_INSTALL_TIMEOUT: "120" });
    const child = execa(process.execPath, [SCRIPT, "pi", "codex"], {
      env: s.env,
      reject: false,
      timeout: 60_000,
    });
    // Both npm runs are alive at once (each hangs until killed): they were started together.
    await until(() => s.pids().length === 2 && s.leftovers().length === 2, 20_000);
    await until(
      () => fs.readdirSync(s.cache).some((d) => fs.existsSync(path.join(s.cache, d, "node_modules", "blob"))),
      20_000,
    );
    child.kill("SIGINT");
    const r = await child;
    expect(r.exitCode).toBe(130);
    expect(r.stderr).toContain("SIGINT: stopping 2 install(s)");
    expect(s.leftovers()).toEqual([]);
    for (const pid of s.pids()) expect(pidAlive(pid)).toBe(false);
  });
});
