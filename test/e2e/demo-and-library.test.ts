import { readFileSync } from "node:fs";
import path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { createMuster, type MusterEvent } from "../../src/index.js";
import { BIN, pidAlive, REPO, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-demo");

describe("muster demo", () => {
  it("runs three mock children in panes, shows progress and results, then removes them", async () => {
    const r = await sb.run(["demo"]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const agent of ["demo-explore", "demo-review", "demo-plan"]) expect(r.stdout).toContain(agent);
    expect(r.stdout).toMatch(/running|completed/);
    expect(r.stdout.match(/prompt-sha256: [0-9a-f]{64}/g)).toHaveLength(3);
    expect(r.stdout).toMatch(/closed and removed .*demo --keep keeps them/);
    // The demo's children do not outlive it (test/e2e/first-run.test.ts checks panes and files, and --keep).
    const ls = await sb.json(["ls"]);
    expect(ls.data.children).toEqual([]);
    // Nor does muster's detached tmux session, once only its placeholder window is left.
    const sessions = await execa("tmux", ["-L", sb.socket, "list-sessions", "-F", "#{session_name}"], {
      reject: false,
    });
    expect(sessions.stdout.split("\n")).not.toContain("muster");

    // A session that still holds a child stays: removing another child leaves it.
    const kept = (await sb.json(["spawn", "--wait", "stays"])).data.results[0].id as string;
    const gone = (await sb.json(["spawn", "--wait", "goes"])).data.results[0].id as string;
    expect((await sb.run(["rm", gone])).exitCode).toBe(0);
    const still = await execa("tmux", ["-L", sb.socket, "list-sessions", "-F", "#{session_name}"], {
      reject: false,
    });
    expect(still.stdout.split("\n")).toContain("muster");
    expect((await sb.run(["rm", "--force", kept])).exitCode).toBe(0);
  });

  it("names its backend and, while its children run, how to watch them (tmux: the detached session)", async () => {
    const demo = execa(process.execPath, [BIN, "demo"], {
      cwd: sb.cwd,
      env: sb.env,
      extendEnv: false,
      reject: false,
    });
    let out = "";
    const hint = new Promise<string>((resolve) => {
      demo.stdout!.on("data", (d: Buffer) => {
        out += String(d);
        const line = out.split("\n").find((l) => l.startsWith("Watch while they run"));
        if (line && out.includes(`${line}\n`)) resolve(line);
      });
      // A demo that ends without the hint fails here, not by the test's timeout.
      void demo.then(() => resolve(""));
    });
    const line = await hint;
    expect(out.split("\n")[0]).toBe(
      'muster demo: starting three mock children on the tmux backend, each in a window of its own in the detached tmux session "muster"…',
    );
    const m = line.match(
      /: (?:npx )?muster attach ([0-9a-f]{8}) \(or [0-9a-f]{8}, [0-9a-f]{8}\), detach with prefix \+ d; all three: (.+)$/,
    );
    expect(m, line).not.toBeNull();
    expect(m![2]).toBe(`tmux -L ${sb.socket} attach-session -t muster`);
    // The session it names holds the three children while the demo runs.
    const windows = await execa("tmux", [
      "-L",
      sb.socket,
      "list-windows",
      "-t",
      "=muster",
      "-F",
      "#{window_name}",
    ]);
    expect(windows.stdout.split("\n").filter((w) => w.startsWith("demo-"))).toHaveLength(3);
    const r = await demo;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(out.indexOf(line)).toBeLessThan(out.indexOf("── "));
  });

  it("on the pty backend it says so (no tmux pane) and how to attach to a child", async () => {
    const r = await sb.run(["demo"], { env: { MUSTER_BACKEND: "pty" } });
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(
      "muster demo: starting three mock children on the pty backend, each under a pseudo-terminal of its own (no tmux pane)…",
    );
    expect(lines[1]).toMatch(
      /^Watch while they run \(removed at the end unless --keep\): (?:npx )?muster attach [0-9a-f]{8} \(or [0-9a-f]{8}, [0-9a-f]{8}\), detach with Ctrl-\\$/,
    );
    expect(r.stdout).not.toMatch(/own tmux pane|tmux -L|attach-session|prefix \+ d/);
  });

  it("without tmux it says how to install it", async () => {
    const r = await sb.run(["demo"], { env: { MUSTER_TMUX_BIN: "/nonexistent/tmux" } });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/needs tmux: install it/);
  });
});

describe("library API (createMuster)", () => {
  it("spawn, wait, result and the events iterator work in-process; a killed host shows up as lost", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const a = await m.spawn({ agent: "mock", prompt: "library call\nmock: tools=1" });
    const outcome = await m.wait([a.id], { withText: true, timeoutMs: 20_000 });
    expect(outcome.results[0]).toMatchObject({ id: a.id, status: "completed" });
    expect(outcome.results[0]!.text).toContain("Task: library call");
    expect(m.result(a.id).text).toBe(outcome.results[0]!.text);

    const b = await m.spawn({ agent: "mock", prompt: "mock: hang" });
    const seen: { id: string; event: MusterEvent }[] = [];
    const it = m.events({ livenessMs: 300 });
    const collect = (async () => {
      for await (const x of it) {
        seen.push(x);
        if (x.id === b.id && x.event.type === "child_exited") break;
      }
    })();
    const started = await until(
      () => seen.find((x) => x.id === b.id && x.event.type === "child_started"),
      10_000,
    );
    const hostPid = (started.event as { pid: number }).pid;
    process.kill(hostPid, "SIGKILL");
    await collect;
    expect(pidAlive(hostPid)).toBe(false);
    const ofB = seen.filter((x) => x.id === b.id).map((x) => x.event);
    expect(ofB.find((e) => e.type === "completion")).toMatchObject({ status: "lost", by: "parent" });
    expect(seen.some((x) => x.id === a.id && x.event.type === "completion")).toBe(true);
    expect((await m.view(b.id)).status).toBe("lost");
    expect(m.resolve(b.id.slice(-6))).toBe(b.id);
    expect(() => m.resolve("zzzzzz")).toThrow(/no child/);
  });

  it("the published declarations show views, never the state the core loads a child into", () => {
    const dts = readFileSync(path.join(REPO, "dist", "core", "muster.d.ts"), "utf8");
    for (const method of ["view", "views", "detail", "resolve"])
      expect(dts).toMatch(new RegExp(`\\b${method}\\(`));
    for (const internal of ["list", "status", "child", "children", "reload", "reconcile"]) {
      expect(dts).not.toMatch(new RegExp(`^\\s+${internal}\\(`, "m"));
    }
    expect(dts).not.toMatch(/LoadedChild/);
  });

  it("wait can target a given turn: it settles with that turn, not a newer one queued behind it", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const a = await m.spawn({ agent: "mock", prompt: "first\nmock: sleep=1" });
    const next = await m.send(a.id, "second\nmock: sleep=3");
    expect(next.turnId).not.toBe(a.turnId);
    const first = await m.wait([a.id], { turns: new Map([[a.id, a.turnId]]), timeoutMs: 20_000 });
    expect(first.results[0]).toMatchObject({ id: a.id, turnId: a.turnId, status: "completed" });
    // It did not sit out the second turn: that one is still unsettled when the wait returns.
    expect((await m.status(a.id)).state.completions.has(next.turnId)).toBe(false);
    const newest = await m.wait([a.id], { timeoutMs: 20_000 });
    expect(newest.results[0]).toMatchObject({ turnId: next.turnId, status: "completed" });
  });
});
