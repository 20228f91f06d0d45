/**
 * The backend seam, proved by a second backend that lives only in test/fixtures/process-backend.mjs (a
 * plain detached process per child host, output to a log file) and is plugged in with
 * MUSTER_BACKEND_MODULE: the whole life of a child runs on it, and its children mix with tmux children
 * under one primary.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-2nd");
const MODULE = path.join(REPO, "test", "fixtures", "process-backend.mjs");
// Every call loads the module: a process child is reached only through its backend.
sb.env.MUSTER_BACKEND_MODULE = MODULE;
const onProcess = { MUSTER_BACKEND: "process" };

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string) => /prompt-sha256: ([0-9a-f]{64})/.exec(text)?.[1];
const hostPidOf = (dir: string): number =>
  readEvents(dir).findLast((e) => e.type === "child_started")?.pid as number;

/** Pane ids on the sandbox's private tmux server ([] when it does not run). */
async function tmuxPanes(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false });
  return String(r.stdout).split("\n").filter(Boolean);
}

/** Spawns a hanging child and waits until its runner runs; returns its status and pids. */
async function hangingChild(args: string[], env: NodeJS.ProcessEnv = {}) {
  const spawned = await sb.json(["spawn", ...args, "mock: hang"], { env });
  expect(spawned.exitCode).toBe(0);
  const id = spawned.data.id as string;
  const st = await until(async () => {
    const s = (await sb.json(["status", id])).data;
    return readEvents(s.artifactDir).some((e) => e.type === "runner_started") ? s : undefined;
  });
  const runnerPid = readEvents(st.artifactDir).find((e) => e.type === "runner_started")?.pid as number;
  return { id, st, dir: st.artifactDir as string, hostPid: hostPidOf(st.artifactDir), runnerPid };
}

describe("a second backend from test/fixtures, loaded by MUSTER_BACKEND_MODULE", () => {
  it("spawn, wait, capture, send, lost (kill -9 of the host), resume and cancel all run on it", async () => {
    const prompt = "first task\nmock: tools=1";
    const spawned = await sb.json(["spawn", prompt], { env: onProcess });
    expect(spawned.exitCode).toBe(0);
    expect(spawned.data.backend).toBe("process");
    const id = spawned.data.id as string;

    const waited = await sb.run(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode).toBe(0);
    expect(shaIn(waited.stdout)).toBe(sha(prompt));

    const st = (await sb.json(["status", id])).data;
    expect(st).toMatchObject({ status: "idle", backend: "process", pane: { backend: "process" } });
    expect(st.pane.id).toBe(spawned.data.paneId);
    // The host is a plain process with no terminal: its pane's output is a log file the backend reads.
    expect(fs.existsSync(path.join(st.pane.data.dir, "output.log"))).toBe(true);
    const cap = await sb.run(["capture", id, "--lines", "50"]);
    expect(cap.exitCode).toBe(0);
    expect(cap.stdout).toContain("completed");
    // attach is routed to the child's backend too.
    const attach = await sb.run(["attach", "--print", id]);
    expect(attach.stdout).toContain("output.log");
    // Nothing of it went to tmux.
    expect(await tmuxPanes()).toEqual([]);

    // send: the next turn through the inbox, in the same host.
    const host1 = hostPidOf(st.artifactDir);
    const sent = await sb.run(["send", id, "second task", "--wait"]);
    expect(sent.exitCode).toBe(0);
    expect(shaIn(sent.stdout)).toBe(sha("second task"));
    expect(hostPidOf(st.artifactDir)).toBe(host1);

    // Lost: the host killed mid-turn is found dead through the backend's host control, and settled.
    await sb.run(["send", id, "mock: hang"]);
    await until(() => readEvents(st.artifactDir).filter((e) => e.type === "runner_started").length === 3);
    const runner = readEvents(st.artifactDir).findLast((e) => e.type === "runner_started")?.pid as number;
    process.kill(host1, "SIGKILL");
    const lost = await sb.json(["wait", id, "--timeout", "15s"]);
    expect(lost.exitCode).toBe(5);
    expect(lost.data.results[0]).toMatchObject({ status: "lost" });
    expect(lost.data.results[0].reason).toMatch(/child host \(pid \d+\) is gone/);
    await until(() => !pidAlive(runner), 5000);
    expect((await sb.json(["status", id])).data.status).toBe("lost");

    // Resume: a new host in a new pane of the child's own backend, whatever the default is now.
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "after the loss"], {
      env: { MUSTER_BACKEND: "tmux" },
    });
    expect(resumed.exitCode).toBe(0);
    expect(shaIn(resumed.data.results[0].text)).toBe(sha("after the loss"));
    const after = (await sb.json(["status", id])).data;
    expect(after).toMatchObject({ status: "idle", backend: "process", pane: { backend: "process" } });
    expect(after.pane.id).not.toBe(st.pane.id);
    const host2 = hostPidOf(after.artifactDir);
    expect(host2).not.toBe(host1);
    expect(await tmuxPanes()).toEqual([]);

    // Cancel: SIGTERM through the host control; the child records it itself and its pane is closed.
    const cancelled = await sb.json(["cancel", id]);
    expect(cancelled.exitCode).toBe(0);
    expect(cancelled.data.cancelled[0]).toMatchObject({ id, by: "child", pane: "closed" });
    await until(() => !pidAlive(host2), 5000);
    expect(fs.existsSync(after.pane.data.dir)).toBe(false);
    expect(readEvents(after.artifactDir).at(-1)).toMatchObject({ type: "child_exited", reason: "closed" });
  });

  it("a tmux child and a process child under one primary: ls shows each with its backend, cancel --all stops both", async () => {
    const t = await hangingChild([]);
    const p = await hangingChild(["--backend", "process"]);
    expect(t.st).toMatchObject({ backend: "tmux", pane: { backend: "tmux" } });
    expect(p.st).toMatchObject({ backend: "process", pane: { backend: "process" } });
    expect(await tmuxPanes()).toContain(t.st.pane.paneId);

    const ls = (await sb.json(["ls"])).data;
    const mine = ls.children.filter((c: { id: string }) => c.id === t.id || c.id === p.id);
    expect(mine.map((c: { backend: string; status: string }) => [c.backend, c.status]).sort()).toEqual([
      ["process", "running"],
      ["tmux", "running"],
    ]);

    const all = await sb.json(["cancel", "--all"]);
    expect(all.exitCode).toBe(0);
    const byId = new Map(all.data.cancelled.map((r: { id: string }) => [r.id, r]));
    for (const c of [t, p]) {
      expect(byId.get(c.id)).toMatchObject({ by: "child", turnCancelled: true, pane: "closed" });
      expect(readEvents(c.dir).find((e) => e.type === "completion")).toMatchObject({ status: "cancelled" });
      await until(() => !pidAlive(c.hostPid) && !pidAlive(c.runnerPid), 5000);
    }
    expect(await tmuxPanes()).not.toContain(t.st.pane.paneId);
    expect(fs.existsSync(p.st.pane.data.dir)).toBe(false);
  });

  it("without its module a process child is listed, not declared lost; an unknown backend refuses the spawn and creates nothing", async () => {
    const p = await hangingChild(["--backend", "process"]);
    const bare = { MUSTER_BACKEND_MODULE: "" };
    const ls = await sb.json(["ls"], { env: bare });
    expect(ls.exitCode).toBe(0);
    expect(ls.data.children.find((c: { id: string }) => c.id === p.id)).toMatchObject({ status: "running" });
    const cap = await sb.run(["capture", p.id], { env: bare });
    expect(cap.exitCode).not.toBe(0);
    expect(cap.stderr).toMatch(/backend "process" is not available here.*MUSTER_BACKEND_MODULE/);

    // cancel and rm need its backend: refused before anything changes (no closing mark, nothing removed).
    const cancel = await sb.run(["cancel", p.id], { env: bare });
    expect(cancel.exitCode).toBe(2);
    expect(cancel.stderr).toMatch(/backend "process" is not available here/);
    expect(fs.existsSync(path.join(p.dir, "closing"))).toBe(false);
    const rm = await sb.run(["rm", "--force", p.id], { env: bare });
    expect(rm.exitCode).toBe(2);
    expect(fs.existsSync(p.dir)).toBe(true);
    expect(pidAlive(p.hostPid)).toBe(true);

    const before = (await sb.json(["ls"])).data.children.length;
    const bad = await sb.run(["spawn", "--backend", "nope", "hello"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(
      /backend "nope" is not available here \(available: process, (\w+, )*tmux(, \w+)*\)/,
    );
    expect((await sb.json(["ls"])).data.children.length).toBe(before);

    const missing = await sb.run(["ls"], { env: { MUSTER_BACKEND_MODULE: path.join(sb.cwd, "none.mjs") } });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/MUSTER_BACKEND_MODULE: cannot load .*none\.mjs/);

    expect((await sb.json(["cancel", p.id])).data.cancelled[0]).toMatchObject({ by: "child" });
    await until(() => !pidAlive(p.hostPid), 5000);
    // gc skips a settled child whose pane it cannot close here, and says why.
    const gc = await sb.json(["gc", "--older-than", "0s"], { env: bare });
    expect(gc.data.skipped).toContainEqual({
      id: p.id,
      why: expect.stringMatching(/backend "process" is not loaded/),
    });
    expect(fs.existsSync(p.dir)).toBe(true);
  });
});
