import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-gc");

describe("muster gc", () => {
  it("says what it kept and why: recent children against the 7-day default; a named child by its name", async () => {
    const recent = (await sb.json(["spawn", "--name", "recent-one", "--wait", "young"])).data.spawned
      .id as string;
    await sb.run(["cancel", recent]);
    const human = await sb.run(["gc", "--dry-run"]);
    expect(human.stdout).toMatch(
      /^kept \d+ active in the last 7d \(the default --older-than\): --older-than 1h \(or 0s\) also takes recent ones$/m,
    );
    expect(human.stdout).toMatch(/^0 would remove, [1-9]\d* kept$/m);
    const json = await sb.json(["gc"]);
    expect(json.data.olderThanMs).toBe(7 * 86_400_000);
    expect(json.data.skipped).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: recent, recent: true })]),
    );
    const gone = await sb.run(["gc", "--older-than", "0s"]);
    expect(gone.stdout).toMatch(new RegExp(`^removed ${recent.slice(-8)} recent-one \\(closed, `, "m"));
  });

  it("removes settled children past their age, keeps running ones, and --dry-run removes nothing", async () => {
    const closed = (await sb.json(["spawn", "--wait", "to be collected"])).data;
    await sb.run(["cancel", closed.spawned.id]);
    const idle = (await sb.json(["spawn", "--wait", "idle one"])).data.spawned.id as string;
    const running = (await sb.json(["spawn", "mock: hang"])).data.id as string;
    await until(async () => (await sb.json(["status", running])).data.status === "running");

    const dry = await sb.json(["gc", "--older-than", "0s", "--dry-run"]);
    expect(dry.data.dryRun).toBe(true);
    expect(dry.data.removed.map((r: { id: string }) => r.id)).toEqual([closed.spawned.id]);
    expect(fs.existsSync(closed.results[0].artifactDir)).toBe(true);

    const young = await sb.json(["gc", "--older-than", "1h"]);
    expect(young.data.removed).toEqual([]);

    const real = await sb.json(["gc", "--older-than", "0s"]);
    expect(real.data.removed.map((r: { id: string }) => r.id)).toEqual([closed.spawned.id]);
    const why = Object.fromEntries(real.data.skipped.map((s: { id: string; why: string }) => [s.id, s.why]));
    expect(why[running]).toContain("running");
    expect(why[idle]).toContain("--idle");
    expect(fs.existsSync(closed.results[0].artifactDir)).toBe(false);
    const ids = (await sb.json(["ls"])).data.children.map((c: { id: string }) => c.id);
    expect(ids).not.toContain(closed.spawned.id);
    expect(ids).toEqual(expect.arrayContaining([idle, running]));

    const withIdle = await sb.json(["gc", "--older-than", "0s", "--idle"]);
    expect(withIdle.data.removed.map((r: { id: string }) => r.id)).toEqual([idle]);
    expect((await sb.json(["status", running])).data.status).toBe("running");
    await sb.run(["cancel", running]);
  });

  it("removes every pane a child ever had, the one it had before a resume included", async () => {
    const first = (await sb.json(["spawn", "--wait", "in the first pane"])).data;
    const id = first.spawned.id as string;
    const oldPane = first.spawned.paneId as string;
    // The host exits, its dead pane stays; the resume opens a second pane.
    await sb.run(["cancel", "--keep-pane", id]);
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "in a new pane"]);
    expect(resumed.data.results[0].status).toBe("completed");
    const newPane = resumed.data.resumed.newPane as string;
    expect(newPane).not.toBe(oldPane);
    const panes = async () =>
      String(
        (await execa("tmux", ["-L", sb.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false }))
          .stdout,
      ).split("\n");
    expect(await panes()).toEqual(expect.arrayContaining([oldPane, newPane]));

    const gc = await sb.json(["gc", "--older-than", "0s", "--idle"]);
    expect(gc.data.removed.map((r: { id: string }) => r.id)).toContain(id);
    const left = await panes();
    expect(left).not.toContain(oldPane);
    expect(left).not.toContain(newPane);
    // No child is left, so muster's detached session (only its placeholder window) went too.
    expect((await sb.json(["ls"])).data.children).toEqual([]);
    expect(left.filter(Boolean)).toEqual([]);
  });
});

describe("completion groups", () => {
  it("a group whose children are all removed is freed: gc removes it, and the group limit counts only live ones", async () => {
    const first = (await sb.json(["spawn", "--group", "g-first", "--wait", "in a group"])).data;
    const id = first.spawned.id as string;
    const groups = path.resolve(first.results[0].artifactDir, "../../groups");
    expect(fs.existsSync(`${groups}/g-first.json`)).toBe(true);
    expect((await sb.run(["rm", id])).exitCode).toBe(0);
    const gc = await sb.json(["gc", "--older-than", "0s"]);
    expect(gc.data.groupsRemoved).toBe(1);
    expect(fs.existsSync(`${groups}/g-first.json`)).toBe(false);

    // The state 512 spawns into groups leave once their children were removed outside gc (as by rm).
    for (let i = 0; i < 512; i++) {
      const member = { id: `01a00000-0000-7000-8000-${String(i).padStart(12, "0")}`, turnId: "t" };
      const g = {
        v: 1,
        groupId: `old-${i}`,
        members: [member],
        sealed: true,
        createdAt: new Date().toISOString(),
      };
      fs.writeFileSync(`${groups}/old-${i}.json`, JSON.stringify(g), { mode: 0o600 });
    }
    const joined = await sb.json(["spawn", "--group", "g-new", "--wait", "a new group"]);
    expect(joined.exitCode).toBe(0);
    expect(joined.data.results[0].status).toBe("completed");
    expect(fs.readdirSync(groups).sort()).toEqual(["g-new.json"]);
  });
});
