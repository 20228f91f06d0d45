import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";

/** Whether a process watches a file through inotify (its fdinfo lists the file's inode): a wait under way. */
function watches(pid: number, file: string): boolean {
  try {
    const ino = `ino:${fs.statSync(file).ino.toString(16)} `;
    return fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) !== "anon_inode:inotify") return false;
        return fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8").includes(ino);
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

const sb = useSandbox("mt-exit");

/** One child per outcome, settled before the tests read them. */
const ids: Record<string, string> = {};

const spawnId = async (prompt: string): Promise<string> => {
  const r = await sb.run(["spawn", prompt]);
  expect(r.exitCode).toBe(0);
  return r.stdout.trim();
};

const settled = async (id: string, status: string): Promise<void> => {
  await until(async () => (await sb.json(["status", id])).data.lastOutcome === status, 30_000, 100);
};

describe("result and wait exit by the one table, with or without --json", () => {
  beforeAll(async () => {
    ids.completed = await spawnId("fine");
    ids.errored = await spawnId("fails\nmock: exit=1");
    ids.cancelled = await spawnId("hangs\nmock: hang");
    ids.lost = await spawnId("dies\nmock: crash");
    await settled(ids.completed, "completed");
    await settled(ids.errored, "errored");
    await until(
      async () => (await sb.json(["status", ids.cancelled!])).data.status === "running",
      30_000,
      100,
    );
    expect((await sb.run(["cancel", ids.cancelled])).exitCode).toBe(0);
    await settled(ids.lost, "lost");
    // A spent budget: the first turn after it may still run, the next one settles exhausted without running.
    expect((await sb.run(["budget", "--tokens", "1"])).exitCode).toBe(0);
    await sb.run(["spawn", "--wait", "uses the budget"]);
    ids.exhausted = await spawnId("over budget");
    await settled(ids.exhausted, "exhausted");
    expect((await sb.run(["budget", "--clear"])).exitCode).toBe(0);
  }, 120_000);

  const table: [string, number][] = [
    ["completed", 0],
    ["errored", 1],
    ["cancelled", 3],
    ["exhausted", 4],
    ["lost", 5],
  ];

  for (const [status, code] of table) {
    it(`${status} → ${code}`, async () => {
      const id = ids[status]!;
      for (const command of ["result", "wait"]) {
        const human = await sb.run([command, id]);
        expect([command, human.exitCode]).toEqual([command, code]);
        const json = await sb.run([command, id, "--json"]);
        expect([command, "--json", json.exitCode]).toEqual([command, "--json", code]);
        const doc = JSON.parse(json.stdout);
        expect(command === "result" ? doc.status : doc.results[0].status).toBe(status);
      }
    });
  }
});

describe("spawn --wait and send --wait exit by the same table", () => {
  it("an errored turn → 1, with or without --json", async () => {
    const human = await sb.run(["spawn", "--wait", "fails\nmock: exit=1"]);
    expect(human.exitCode).toBe(1);
    const json = await sb.json(["spawn", "--wait", "fails\nmock: exit=1"]);
    expect(json.exitCode).toBe(1);
    const id = json.data.spawned.id as string;
    expect((await sb.run(["send", id, "--wait", "fails again\nmock: exit=1"])).exitCode).toBe(1);
    expect((await sb.json(["send", id, "--wait", "and again\nmock: exit=1"])).exitCode).toBe(1);
  });
});

describe("waiting that ends without an outcome", () => {
  it("wait --timeout → 124 and an interrupted wait → 130, with or without --json", async () => {
    const id = await spawnId("hangs\nmock: hang");
    const events = path.join((await sb.json(["status", id])).data.artifactDir as string, "events.ndjson");
    for (const json of [[], ["--json"]]) {
      const r = await sb.run(["wait", id, "--timeout", "500ms", ...json]);
      expect([json, r.exitCode]).toEqual([json, 124]);
      if (json.length) expect(JSON.parse(r.stdout)).toMatchObject({ timedOut: true, pending: [id] });
    }
    for (const json of [[], ["--json"]]) {
      const w = execa(process.execPath, [BIN, "wait", id, ...json], {
        cwd: sb.cwd,
        env: sb.env,
        extendEnv: false,
        reject: false,
        stdin: "ignore",
      });
      // Interrupt once the wait is under way — it watches the child's events (a fixed sleep was too short for
      // a loaded machine's node start-up); its child is still running, so it cannot have returned.
      await until(() => w.pid !== undefined && watches(w.pid, events), 30_000);
      w.kill("SIGINT");
      const r = await w;
      expect([json, r.exitCode]).toEqual([json, 130]);
    }
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
  }, 60_000);
});

describe("result --turn takes the turn as status shows it", () => {
  it("its number, its full id, its short id or a unique prefix; ambiguous and unknown ones are refused", async () => {
    const first = await sb.json(["spawn", "--wait", "mock: reply=one"]);
    const id = first.data.spawned.id as string;
    expect((await sb.run(["send", id, "--wait", "mock: reply=two"])).exitCode).toBe(0);
    expect((await sb.run(["send", id, "--wait", "mock: reply=three"])).exitCode).toBe(0);
    const turns = (await sb.json(["status", id])).data.turnList.map((t: { turnId: string }) => t.turnId);
    expect(turns).toHaveLength(3);
    const second = turns[1] as string;
    const others = turns.filter((t: string) => t !== second);
    let prefix = second.slice(0, 1);
    while (others.some((t: string) => t.startsWith(prefix))) prefix = second.slice(0, prefix.length + 1);
    for (const ref of ["2", second, second.slice(-8), prefix, second.toUpperCase()]) {
      const r = await sb.run(["result", id, "--turn", ref]);
      expect([ref, r.exitCode, r.stdout]).toEqual([ref, 0, "two"]);
    }
    expect((await sb.run(["result", id, "--turn", "3"])).stdout).toBe("three");

    const common = turns[0].slice(0, 4); // UUIDv7 ids made seconds apart share their first digits
    const ambiguous = await sb.run(["result", id, "--turn", common]);
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toMatch(/ambiguous/);
    for (const unknown of ["4", "ffffffff", "not/a-turn"]) {
      const r = await sb.run(["result", id, "--turn", unknown]);
      expect([unknown, r.exitCode]).toEqual([unknown, 2]);
      expect(r.stderr).toContain(`muster status ${id.slice(-8)}`);
    }
  }, 60_000);
});
