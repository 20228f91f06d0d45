/**
 * The disk holding the state root filled by something else while a turn runs: the turn settles errored
 * naming the full disk, the host lives on, and once there is room again the child takes its next turn.
 */
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkArtifacts, pidAlive, readEvents, until, useSandbox } from "../helpers/cli.js";
import { mountSmallDisk, type SmallDisk } from "../helpers/tmpfs.js";

const sb = useSandbox("mt-dout");

let disk: SmallDisk;
beforeAll(async () => {
  disk = await mountSmallDisk("mt-dout", "4m");
});
afterAll(async () => {
  await disk?.unmount();
});

describe("the disk fills up from outside during a turn", () => {
  it("the turn settles errored naming ENOSPC, the host lives on, and the next turn runs once there is room", async () => {
    const home = path.join(disk.dir, "home");
    const env = { MUSTER_HOME: home };
    // A slow turn: a tool activity every ~200 ms for a minute, so the fill lands while it runs.
    const r = await sb.json(["spawn", "--agent", "mock", "mock: sleep=60 tools=300\nfilled from outside"], {
      env,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const id = r.data.id as string;
    const dir = (await sb.json(["status", id], { env })).data.artifactDir as string;
    const started = await until(() => readEvents(dir).find((e) => e.type === "child_started"), 30_000, 50);
    // The turn runs: its agent has reported a tool.
    await until(() => readEvents(dir).some((e) => e.type === "tool_activity"), 30_000, 50);
    disk.fill();
    let completion: Record<string, unknown>;
    try {
      completion = await until(() => readEvents(dir).find((e) => e.type === "completion"), 60_000, 100);
      expect(completion).toMatchObject({ status: "errored", by: "child" });
      expect(completion.reason).toMatch(/the disk holding .* is full \(ENOSPC\)/);
      expect(pidAlive(started.pid as number)).toBe(true);
      // Read while the disk is still full: the outcome shows (receipts it cannot write are not its business).
      const w = await sb.json(["wait", id, "--timeout", "20s"], { env });
      expect(w.data.results[0], w.stderr).toMatchObject({ status: "errored" });
      expect(w.data.results[0].reason).toMatch(/full \(ENOSPC\)/);
    } finally {
      disk.free();
    }
    const res = await sb.json(["result", id], { env });
    expect(res.data).toMatchObject({ status: "errored" });
    expect(res.data.reason).toMatch(/full \(ENOSPC\)/);
    const st = await sb.run(["status", id], { env });
    expect(st.stdout).toMatch(/full \(ENOSPC\)/);
    const cap = (await sb.run(["capture", id], { env })).stdout;
    expect(cap).not.toMatch(/muster child host stopped/);
    expect(cap).not.toMatch(/^\s+at /m);

    // Room again: the same host takes the next turn.
    const next = await sb.json(["send", id, "--wait", "--timeout", "60s", "after the disk was freed"], {
      env,
    });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.data.results?.[0] ?? next.data).toMatchObject({ status: "completed" });
    expect(pidAlive(started.pid as number)).toBe(true);
    expect(checkArtifacts(home)).toEqual([]);
    expect((await sb.run(["cancel", id], { env })).exitCode).toBe(0);
  }, 150_000);

  it("a turn that comes while the disk is full settles errored (its run slot or its prompt not written); a typed line not taken is said in the pane", async () => {
    const home = path.join(disk.dir, "home");
    const env = { MUSTER_HOME: home };
    const s = await sb.json(["spawn", "--agent", "mock", "--wait", "before the disk filled"], { env });
    expect(s.exitCode, s.stderr).toBe(0);
    const { id, paneId } = s.data.spawned as { id: string; paneId: string };
    const dir = s.data.results[0].artifactDir as string;
    const hostPid = readEvents(dir).find((e) => e.type === "child_started")!.pid as number;
    const type = (text: string) => execa("tmux", ["-L", sb.socket, "send-keys", "-t", paneId, text, "Enter"]);
    const completions = () => readEvents(dir).filter((e) => e.type === "completion");
    try {
      // One page left: the typed line's inbox file takes it; the turn's next new file (its run slot's ticket, or
      // its prompt file when a page came free meanwhile) finds none.
      disk.fill(4096);
      await type("typed while one page was left");
      const done = await until(() => completions()[1], 30_000, 100);
      expect(done).toMatchObject({ status: "errored", by: "child" });
      expect(done.reason).toMatch(
        /the disk holding .* is full \(ENOSPC\): cannot (take a run slot|write the prompt file)/,
      );
      // Nothing left at all: the line cannot even be taken; the pane says so in one line.
      disk.fill();
      await type("typed on a full disk");
      await until(
        async () =>
          /typed line not taken: .*the disk is full \(ENOSPC\)/.test(
            (await sb.run(["capture", id], { env })).stdout,
          ),
        30_000,
        200,
      );
      expect(pidAlive(hostPid)).toBe(true);
    } finally {
      disk.free();
    }
    const next = await sb.json(["send", id, "--wait", "--timeout", "60s", "with room again"], { env });
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.data.results[0]).toMatchObject({ status: "completed" });
    expect(pidAlive(hostPid)).toBe(true);
    expect(checkArtifacts(home)).toEqual([]);
    expect((await sb.run(["cancel", id], { env })).exitCode).toBe(0);
  }, 150_000);
});
