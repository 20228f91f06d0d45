import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { pidAlive, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-fault");

/** Spawns a hanging child and waits until its runner is running; returns ids, dir and runner pid. */
async function runningChild(prompt = "mock: hang") {
  const id = (await sb.run(["spawn", prompt])).stdout.trim();
  const st = await until(async () => {
    const s = (await sb.json(["status", id])).data;
    return s.turnList.length === 1 &&
      fs.readFileSync(path.join(s.artifactDir, "events.ndjson"), "utf8").includes("runner_started")
      ? s
      : undefined;
  });
  const runnerPid = readEvents(st.artifactDir).find((e) => e.type === "runner_started").pid as number;
  const hostPid = readEvents(st.artifactDir).find((e) => e.type === "child_started").pid as number;
  return { id, dir: st.artifactDir as string, paneId: st.pane.paneId as string, runnerPid, hostPid };
}

describe("faults never leave a child running", () => {
  it("cancel --keep-pane during a turn: a cancelled completion, the runner's process group gone, the pane readable", async () => {
    const c = await runningChild();
    expect(pidAlive(c.runnerPid)).toBe(true);
    const r = await sb.json(["cancel", "--keep-pane", c.id]);
    expect(r.exitCode).toBe(0);
    expect(r.data.cancelled[0]).toMatchObject({ id: c.id, by: "child", pane: "kept" });
    const completion = readEvents(c.dir).find((e) => e.type === "completion");
    expect(completion).toMatchObject({ status: "cancelled", by: "child" });
    expect(readEvents(c.dir).at(-1)).toMatchObject({ type: "child_exited", reason: "cancelled" });
    expect(() => process.kill(-c.runnerPid, 0)).toThrow();
    await until(() => !pidAlive(c.hostPid), 5000);
    const cap = await sb.run(["capture", c.id]);
    expect(cap.exitCode).toBe(0);
    expect(cap.stdout).toContain("cancelled");
    const w = await sb.run(["wait", c.id]);
    expect(w.exitCode).toBe(3);
    // Cancelling again is harmless and says so.
    expect((await sb.run(["cancel", c.id])).stdout).toContain("already");
  });

  it("tmux kill-pane on a running child: lost within 5 s, runner gone", async () => {
    const c = await runningChild();
    const t0 = Date.now();
    await execa("tmux", ["-L", sb.socket, "kill-pane", "-t", c.paneId]);
    const w = await sb.json(["wait", c.id, "--timeout", "10s"]);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(w.exitCode).toBe(5);
    expect(w.data.results[0].status).toBe("lost");
    await until(() => !pidAlive(c.runnerPid), 3000);
    expect((await sb.json(["status", c.id])).data.status).toBe("lost");
  });

  it("a pane closed by a cancel (the closing mark is there) settles cancelled, not lost", async () => {
    // What `muster cancel` does to a child whose host started only after the cancel looked: mark, close the pane.
    const c = await runningChild();
    fs.writeFileSync(path.join(c.dir, "closing"), `${new Date().toISOString()}\n`);
    await execa("tmux", ["-L", sb.socket, "kill-pane", "-t", c.paneId]);
    const w = await sb.json(["wait", c.id, "--timeout", "10s"]);
    expect(w.data.results[0]).toMatchObject({ status: "cancelled" });
    await until(() => readEvents(c.dir).some((e) => e.type === "child_exited"), 5000);
    expect(readEvents(c.dir).find((e) => e.type === "child_exited")).toMatchObject({
      reason: "cancelled",
      by: "child",
    });
    await until(() => !pidAlive(c.runnerPid), 3000);
  });

  it("a host gone without a record while its cancel is under way (closing mark) is settled cancelled from the parent side", async () => {
    // A cancel that closed the pane of a host still starting: the SIGHUP killed it before its handlers were set.
    const c = await runningChild();
    fs.writeFileSync(path.join(c.dir, "closing"), `${new Date().toISOString()}\n`);
    process.kill(c.hostPid, "SIGKILL");
    await until(() => !pidAlive(c.hostPid), 3000);
    const w = await sb.json(["wait", c.id, "--timeout", "10s"]);
    expect(w.data.results[0]).toMatchObject({ status: "cancelled" });
    expect(w.data.results[0].reason).toMatch(/^cancelled by muster cancel \(child host \(pid \d+\) is gone/);
    expect(readEvents(c.dir).at(-1)).toMatchObject({
      type: "child_exited",
      reason: "cancelled",
      by: "parent",
    });
    await until(() => !pidAlive(c.runnerPid), 3000);
  });

  it("SIGKILL of the child host mid-turn (mock: crash): lost within 5 s from the parent side, runner group killed", async () => {
    const id = (await sb.run(["spawn", "mock: crash"])).stdout.trim();
    const t0 = Date.now();
    const w = await sb.json(["wait", id, "--timeout", "10s"]);
    expect(w.exitCode).toBe(5);
    expect(Date.now() - t0).toBeLessThan(5000 + 1500);
    expect(w.data.results[0].reason).toMatch(/child host \(pid \d+\) is gone/);
    const dir = w.data.results[0].artifactDir as string;
    const evs = readEvents(dir);
    expect(evs.filter((e) => e.type === "completion")).toEqual([
      expect.objectContaining({ status: "lost", by: "parent" }),
    ]);
    expect(evs.at(-1)).toMatchObject({ type: "child_exited", reason: "lost", by: "parent" });
    const runnerPid = evs.find((e) => e.type === "runner_started").pid as number;
    await until(() => !pidAlive(runnerPid), 3000);
  });

  it("a host killed before it recorded its runner: the parent finds the runner by its child's folder and ends it", async () => {
    const c = await runningChild();
    // Once the runner has said all it says (a runner writing to a host that is gone dies of EPIPE on its own).
    await until(() =>
      fs.readFileSync(path.join(c.dir, "events.ndjson"), "utf8").includes("hanging until cancelled"),
    );
    // The moment between starting the runner and recording it, made to last: the host stopped, its
    // runner_started taken out of the log (written whole under another name, as the host's records are), then
    // the host killed.
    process.kill(c.hostPid, "SIGSTOP");
    const log = path.join(c.dir, "events.ndjson");
    const kept = fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter((l) => !l.includes('"type":"runner_started"'))
      .join("\n");
    fs.writeFileSync(`${log}.tmp`, kept);
    fs.renameSync(`${log}.tmp`, log);
    process.kill(c.hostPid, "SIGKILL");
    try {
      const w = await sb.json(["wait", c.id, "--timeout", "10s"]);
      expect(w.exitCode).toBe(5);
      expect(w.data.results[0]).toMatchObject({ status: "lost" });
      expect(readEvents(c.dir).some((e) => e.type === "runner_started")).toBe(false);
      await until(() => !pidAlive(c.runnerPid), 5000);
    } finally {
      try {
        process.kill(-c.runnerPid, "SIGKILL");
      } catch {}
    }
  });

  it("a plain SIGKILL of the host while idle is noticed by ls", async () => {
    const id = (await sb.json(["spawn", "--wait", "quick"])).data.spawned.id as string;
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    const hostPid = readEvents(dir).find((e) => e.type === "child_started").pid as number;
    process.kill(hostPid, "SIGKILL");
    await until(() => !pidAlive(hostPid), 3000);
    const ls = await sb.json(["ls"]);
    expect(ls.data.children.find((c: { id: string }) => c.id === id).status).toBe("lost");
    expect((await sb.run(["send", id, "more"])).exitCode).toBe(2);
  });

  it("output over 1 MiB: the completion records output_too_large and no snapshot", async () => {
    const r = await sb.json(["spawn", "--wait", "mock: bytes=1100000"]);
    expect(r.exitCode).toBe(0);
    const res = r.data.results[0];
    expect(res.status).toBe("completed");
    expect(res.output).toBeUndefined();
    expect(res.outputError).toMatchObject({ code: "output_too_large", bytes: 1100000 });
    expect(fs.readdirSync(path.join(res.artifactDir, "outputs"))).toEqual([]);
    expect(fs.statSync(path.join(res.artifactDir, "output.md")).size).toBe(1100000);
    const result = await sb.run(["result", res.id]);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain("output_too_large".replace("_", " ").split(" ")[0]);
    // Exactly 1 MiB still gets a snapshot.
    const edge = await sb.json(["spawn", "--wait", `mock: bytes=${1024 * 1024}`]);
    expect(edge.data.results[0].output.bytes).toBe(1024 * 1024);
  });

  it("a torn last line in events.ndjson: readers keep every record before it", async () => {
    const id = (await sb.json(["spawn", "--wait", "before the tear"])).data.spawned.id as string;
    await sb.run(["cancel", id]);
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    const before = readEvents(dir).length;
    fs.appendFileSync(path.join(dir, "events.ndjson"), '{"v":1,"eventId":"torn","seq":99,"type":"compl');
    const st = await sb.json(["status", id]);
    expect(st.exitCode).toBe(0);
    expect(st.data.status).toBe("closed");
    expect(st.data.turnList).toHaveLength(1);
    const res = await sb.run(["result", id]);
    expect(res.stdout).toContain("before the tear");
    expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8").split("\n").length).toBe(before + 1);
  });
});
