import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, pidAlive, readEvents, until, useSandbox, writeProjectAgent } from "../helpers/cli.js";

const sb = useSandbox("mt-restart");

/** Spawns a child whose turn waits on a gate file, and waits until its runner runs. */
async function gatedChild(extra: string[], gateName: string) {
  const gate = path.join(sb.cwd, gateName);
  const s = (await sb.json(["spawn", ...extra, `the gated task\nmock: gate=${encodeURIComponent(gate)}`]))
    .data;
  const dir = s.artifactDir as string;
  const runner = await until(() => readEvents(dir).find((e) => e.type === "runner_started"), 15_000);
  const hostPid = readEvents(dir).find((e) => e.type === "child_started").pid as number;
  return {
    id: s.id as string,
    turnId: s.turnId as string,
    dir,
    gate,
    hostPid,
    runnerPid: runner.pid as number,
  };
}

/** A `muster wait` of the child, as its own process (a parent watching it). */
const waiter = (id: string) =>
  execa(process.execPath, [BIN, "wait", "--json", id, "--timeout", "60s"], {
    cwd: sb.cwd,
    env: sb.env,
    extendEnv: false,
    reject: false,
  });

describe("--restart on-lost: a child whose host dies mid-turn", () => {
  it("is restarted once on the same turn, even with two parents waiting, and the wait gets the completed turn", async () => {
    const c = await gatedChild(["--restart", "on-lost:2"], "gate-once");
    const meta = JSON.parse(fs.readFileSync(path.join(c.dir, "meta.json"), "utf8"));
    expect(meta.restart).toEqual({ onLost: 2 });
    // Two parents watch it when its host dies: the restart is decided once.
    const first = waiter(c.id);
    const second = waiter(c.id);
    process.kill(c.hostPid, "SIGKILL");
    // The new host takes the replayed turn (its runner is a new process), then the gate lets it finish.
    await until(
      () =>
        readEvents(c.dir).filter((e) => e.type === "runner_started" && e.turnId === c.turnId).length === 2,
      30_000,
    );
    fs.writeFileSync(c.gate, "go");
    const [a, b] = await Promise.all([first, second]);
    for (const w of [a, b]) {
      expect(w.exitCode).toBe(0);
      const r = JSON.parse(w.stdout).results[0];
      expect(r).toMatchObject({ id: c.id, turnId: c.turnId, status: "completed" });
    }
    const evs = readEvents(c.dir);
    const restarted = evs.filter((e) => e.type === "restarted");
    expect(restarted).toEqual([
      expect.objectContaining({ turnId: c.turnId, attempt: 1, max: 2, by: "parent" }),
    ]);
    expect(restarted[0].reason).toContain(`child host (pid ${c.hostPid}) is gone`);
    expect(evs.filter((e) => e.type === "child_started").map((e) => e.by)).toEqual(["spawn", "resume"]);
    expect(evs.filter((e) => e.type === "completion")).toEqual([
      expect.objectContaining({ turnId: c.turnId, status: "completed", by: "child" }),
    ]);
    // The interrupted turn's agent went with its host; the replay told the agent what happened.
    await until(() => !pidAlive(c.runnerPid), 5000);
    const answer = (await sb.run(["result", c.id])).stdout;
    expect(answer).toContain("muster restarted you after your process died");
    // status: one turn (the replay is the same turn), with its restart; logs: the restart line.
    const st = (await sb.json(["status", c.id])).data;
    expect(st.status).toBe("idle");
    expect(st.restart).toEqual({ onLost: 2 });
    expect(st.turnList).toHaveLength(1);
    expect(st.turnList[0].restarts).toEqual([
      expect.objectContaining({ attempt: 1, max: 2, by: "parent", reason: restarted[0].reason }),
    ]);
    expect((await sb.run(["status", c.id])).stdout).toMatch(
      /↻ restart 1 of 2 .*child host \(pid \d+\) is gone/,
    );
    expect((await sb.run(["logs", c.id])).stdout).toMatch(/turn 1 +↻ restarted \(1 of 2, by a parent/);
    // It goes on taking turns in its new host.
    const next = await sb.json(["send", "--wait", c.id, "and one more"]);
    expect(next.exitCode).toBe(0);
  });

  it("a crash loop settles lost after N restarts, its reason naming every death", async () => {
    const r = await sb.json(["spawn", "--wait", "--timeout", "60s", "--restart", "on-lost:2", "mock: crash"]);
    expect(r.exitCode).toBe(5);
    const res = r.data.results[0];
    expect(res.status).toBe("lost");
    const evs = readEvents(res.artifactDir);
    const hosts = evs.filter((e) => e.type === "child_started").map((e) => e.pid as number);
    expect(hosts).toHaveLength(3);
    expect(evs.filter((e) => e.type === "restarted").map((e) => e.attempt)).toEqual([1, 2]);
    // Every death is named: the last one first, then each restart's.
    for (const pid of hosts) expect(res.reason).toContain(`child host (pid ${pid}) is gone`);
    expect(res.reason).toMatch(/restarted 2 times \(on-lost:2\), each time lost: 1\) .*; 2\) /);
    expect(evs.filter((e) => e.type === "completion")).toEqual([
      expect.objectContaining({ status: "lost", by: "parent" }),
    ]);
    expect(evs.at(-1)).toMatchObject({ type: "child_exited", reason: "lost", by: "parent" });
    for (const e of evs.filter((x) => x.type === "runner_started"))
      await until(() => !pidAlive(e.pid as number), 5000);
  });

  it("without a policy a dead host's turn is lost at once, as before", async () => {
    const r = await sb.json(["spawn", "--wait", "--timeout", "30s", "mock: crash"]);
    expect(r.exitCode).toBe(5);
    expect(readEvents(r.data.results[0].artifactDir).some((e) => e.type === "restarted")).toBe(false);
  });

  it("a bad --restart is refused with one line and nothing is made; --restart with --resume is refused", async () => {
    for (const bad of ["always", "on-lost:0", "on-lost:21", "on-lost:", "on-lost:x"]) {
      const r = await sb.run(["spawn", "--restart", bad, "hello"]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`--restart must be "no" or "on-lost[:N]"`);
    }
    const done = (await sb.json(["spawn", "--wait", "a first turn"])).data.spawned.id as string;
    const before = (await sb.json(["ls"])).data.children.length;
    const again = await sb.run(["spawn", "--resume", done, "--restart", "on-lost", "more"]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain("--restart is set when a child is spawned");
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });

  it("a profile's restart: is the child's policy; --restart no turns it off; a bad one is a warning", async () => {
    writeProjectAgent(sb, "healer", ["runner: mock", "restart: on-lost:1"]);
    const r = await sb.json(["spawn", "--wait", "--timeout", "60s", "--agent", "healer", "mock: crash"]);
    expect(r.exitCode).toBe(5);
    const dir = r.data.results[0].artifactDir as string;
    expect(JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8")).restart).toEqual({ onLost: 1 });
    expect(readEvents(dir).filter((e) => e.type === "restarted")).toHaveLength(1);
    expect(r.data.results[0].reason).toContain("restarted 1 times (on-lost:1)");

    const off = await sb.json([
      "spawn",
      "--wait",
      "--timeout",
      "30s",
      "--agent",
      "healer",
      "--restart",
      "no",
      "mock: crash",
    ]);
    const offDir = off.data.results[0].artifactDir as string;
    expect(JSON.parse(fs.readFileSync(path.join(offDir, "meta.json"), "utf8")).restart).toBeUndefined();
    expect(readEvents(offDir).some((e) => e.type === "restarted")).toBe(false);

    writeProjectAgent(sb, "sloppy", ["runner: mock", "restart: sometimes"]);
    const w = await sb.json(["spawn", "--agent", "sloppy", "hello"]);
    expect(w.exitCode).toBe(0);
    expect(w.data.warnings.join("\n")).toMatch(/restart.*must be "no" or "on-lost\[:N\]"/);
  });

  it("a workflow step's restart is its child's policy", async () => {
    const file = path.join(sb.cwd, "healing.toml");
    fs.writeFileSync(
      file,
      'name = "healing"\n[[steps]]\nid = "a"\nagent = "mock"\nprompt = "mock: crash"\nrestart = "on-lost:1"\n',
    );
    const r = await sb.json(["workflow", "run", file, "input"], { timeout: 90_000 });
    expect(r.exitCode).toBe(1);
    const step = r.data.steps[0];
    expect(step.status).toBe("lost");
    expect(step.reason).toContain("restarted 1 times (on-lost:1)");
    const dir = (await sb.json(["status", step.childId])).data.artifactDir as string;
    expect(JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8")).restart).toEqual({ onLost: 1 });
  });
});

describe("--restart on-lost: a child whose agent dies mid-turn while its host lives", () => {
  const runnersOf = (dir: string, turnId: string) =>
    readEvents(dir).filter((e) => e.type === "runner_started" && e.turnId === turnId);

  it("the host runs the agent again on the same turn, and the turn completes", async () => {
    const c = await gatedChild(["--restart", "on-lost:2"], "gate-agent");
    process.kill(c.runnerPid, "SIGKILL");
    const again = await until(() => runnersOf(c.dir, c.turnId)[1], 30_000);
    expect(again.pid).not.toBe(c.runnerPid);
    fs.writeFileSync(c.gate, "go");
    const w = await waiter(c.id);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout).results[0]).toMatchObject({ turnId: c.turnId, status: "completed" });
    const evs = readEvents(c.dir);
    const restarted = evs.filter((e) => e.type === "restarted");
    expect(restarted).toEqual([
      expect.objectContaining({ turnId: c.turnId, attempt: 1, max: 2, by: "child" }),
    ]);
    expect(restarted[0].reason).toContain("SIGKILL");
    // The host lived: one host, one turn, one completion; the replay told the agent what happened.
    expect(evs.filter((e) => e.type === "child_started")).toHaveLength(1);
    expect(evs.filter((e) => e.type === "turn_started")).toHaveLength(1);
    expect(pidAlive(c.hostPid)).toBe(true);
    expect((await sb.run(["result", c.id])).stdout).toContain("muster restarted you after your process died");
    const prompts = fs.readdirSync(path.join(c.dir, "prompts"));
    expect(prompts).toContain(`${c.turnId}.restart-1.txt`);
  });

  it("past its bound the turn settles lost, naming every death", async () => {
    const c = await gatedChild(["--restart", "on-lost:1"], "gate-agent-loop");
    process.kill(c.runnerPid, "SIGKILL");
    const again = await until(() => runnersOf(c.dir, c.turnId)[1], 30_000);
    process.kill(again.pid, "SIGKILL");
    const w = await waiter(c.id);
    expect(w.exitCode).toBe(5);
    const r = JSON.parse(w.stdout).results[0];
    expect(r.status).toBe("lost");
    expect(r.reason).toContain("restarted 1 times (on-lost:1), each time lost: 1) ");
    expect(r.reason.match(/SIGKILL/g)?.length).toBe(2);
    // The host lives on for the next turn.
    expect(pidAlive(c.hostPid)).toBe(true);
  });
});
