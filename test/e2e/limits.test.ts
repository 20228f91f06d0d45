import { describe, expect, it } from "vitest";
import { BIN, delegating, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-limit");

/** Largest number of turns whose [turn_started, completion] intervals overlap (by event timestamps). */
function maxOverlap(dirs: string[]): number {
  const marks: [number, number][] = [];
  for (const d of dirs) {
    for (const e of readEvents(d)) {
      if (e.type === "turn_started") marks.push([Date.parse(e.ts), 1]);
      if (e.type === "completion") marks.push([Date.parse(e.ts), -1]);
    }
  }
  marks.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let max = 0;
  for (const [, d] of marks) {
    now += d;
    max = Math.max(max, now);
  }
  return max;
}

describe("limits of a primary's tree", () => {
  it("the run-slot bound: 6 children with a limit of 2 never run more than 2 turns at once, and all settle", async () => {
    const env = { MUSTER_MAX_RUNNING: "2" };
    const spawned = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((i) => sb.json(["spawn", `bounded ${i}\nmock: sleep=3`], { env })),
    );
    for (const r of spawned) expect(r.exitCode, r.stderr).toBe(0);
    const ids = spawned.map((r) => r.data.id as string);
    const w = await sb.json(["wait", ...ids, "--timeout", "60s"]);
    expect(w.exitCode, w.stderr).toBe(0);
    expect(w.data.results).toHaveLength(6);
    const dirs = w.data.results.map((r: { artifactDir: string }) => r.artifactDir);
    expect(maxOverlap(dirs)).toBeLessThanOrEqual(2);
    const queued = dirs.filter((d: string) => readEvents(d).some((e) => e.type === "turn_queued"));
    // Six 3 s turns spawned at once with room for two: several must have waited (how many depends on spawn speed).
    expect(queued.length).toBeGreaterThanOrEqual(2);
    for (const d of queued)
      expect(readEvents(d).find((e) => e.type === "turn_queued")).toMatchObject({ limit: 2 });
  });

  it("a queued child can be cancelled: it settles cancelled without ever starting", async () => {
    const env = { MUSTER_MAX_RUNNING: "1" };
    const hog = (await sb.json(["spawn", "mock: hang"], { env })).data.id as string;
    await until(async () => (await sb.json(["status", hog])).data.status === "running");
    const waiting = (await sb.json(["spawn", "behind the hog"], { env })).data.id as string;
    await until(async () => (await sb.json(["status", waiting])).data.status === "queued");
    await sb.run(["cancel", waiting]);
    const w = await sb.json(["wait", waiting]);
    expect(w.data.results[0]).toMatchObject({
      status: "cancelled",
      reason: expect.stringContaining("never started"),
    });
    await sb.run(["cancel", hog]);
  });

  it("a child runs in the slot its waiting parent holds (no deadlock at the bound); others still queue", async () => {
    // Limit 1: the delegating parent's turn holds the only slot while it waits for its own child. Before,
    // the child queued behind that slot forever and the parent waited forever.
    const env = { MUSTER_MAX_RUNNING: "1" };
    const r = await sb.run(delegating(["spawn", "--wait", "nested\nmock: sleep=8"], { wait: false }), {
      env,
    });
    const parent = JSON.parse(r.stdout).id as string;
    const child = await until(
      async () =>
        (await sb.json(["ls"])).data.children.find(
          (c: { parent: string; status: string }) => c.parent === parent && c.status === "running",
        ),
      20_000,
      100,
    );
    // The pair counts once: an unrelated child still waits for the slot.
    const other = (await sb.json(["spawn", "not related"], { env })).data.id as string;
    const w = await sb.json(["wait", parent, other, "--timeout", "60s"]);
    expect(w.exitCode).toBe(0);
    const byId = new Map(w.data.results.map((x: { id: string }) => [x.id, x]));
    expect(byId.get(parent)).toMatchObject({ status: "completed" });
    expect(byId.get(other)).toMatchObject({ status: "completed" });
    const dirOf = async (id: string) => (await sb.json(["status", id])).data.artifactDir as string;
    expect(readEvents(await dirOf(child.id)).map((e) => e.type)).not.toContain("turn_queued");
    expect(readEvents(await dirOf(other)).find((e) => e.type === "turn_queued")).toMatchObject({ limit: 1 });
  });

  it("depth and live-node limits fail the spawn with a clear error; a profile can forbid spawning", async () => {
    const deep = await sb.run(delegating(["spawn", "--wait", "grandchild"]), {
      env: { MUSTER_MAX_DEPTH: "1" },
    });
    expect(deep.exitCode).toBe(1);
    expect(JSON.parse(deep.stdout).results[0].reason).toContain("depth limit reached");

    const live = (await sb.json(["ls"])).data.children.filter(
      (c: { status: string }) => c.status !== "closed" && c.status !== "lost",
    ).length;
    const r = await sb.run(["spawn", "one too many"], { env: { MUSTER_MAX_LIVE: String(live) } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("live-node limit reached");

    const fs = await import("node:fs");
    const path = await import("node:path");
    fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "leaf.md"),
      `---\ndescription: may not delegate\nrunner: command\nspawn: false\ncommand: ${JSON.stringify([process.execPath, BIN, "spawn", "--wait", "grandchild"])}\n---\n`,
    );
    const leaf = await sb.json(["spawn", "--agent", "leaf", "--wait", "try to delegate"]);
    expect(leaf.exitCode).toBe(1);
    expect(leaf.data.results[0].reason).toContain("may not start children");
  });

  it("cancel --subtree cancels descendants deepest first and reports each; --all closes the rest", async () => {
    const r = await sb.run(delegating(["spawn", "--wait", "mock: hang"], { wait: false }));
    const parent = JSON.parse(r.stdout).id as string;
    const grand = await until(
      async () =>
        (await sb.json(["ls"])).data.children.find(
          (c: { parent: string; status: string }) => c.parent === parent && c.status === "running",
        ),
      15_000,
      100,
    );
    const c = await sb.json(["cancel", "--subtree", parent]);
    expect(c.exitCode).toBe(0);
    expect(c.data.cancelled.map((x: { id: string }) => x.id)).toEqual([grand.id, parent]);
    const all = await sb.json(["cancel", "--all"]);
    expect(all.exitCode).toBe(0);
    const ls = (await sb.json(["ls"])).data.children as { status: string }[];
    expect(ls.every((x) => x.status === "closed" || x.status === "lost")).toBe(true);
  });
});

describe("a shared budget for the tree", () => {
  it("when spent, running turns finish, new turns settle exhausted without running, and results say so", async () => {
    await sb.run(["budget", "--clear"]);
    const set = await sb.json(["budget", "--turns", "2"]);
    expect(set.data.budget).toMatchObject({ turns: 2 });
    const long = (await sb.json(["spawn", "long turn\nmock: sleep=2"])).data.id as string;
    const second = await sb.json(["spawn", "--wait", "second"]);
    expect(second.data.results[0].status).toBe("completed");
    // The budget is spent now; the long turn still finishes.
    const third = await sb.json(["spawn", "--wait", "third"]);
    expect(third.exitCode).toBe(4);
    expect(third.data.results[0]).toMatchObject({
      status: "exhausted",
      reason: expect.stringContaining("budget exhausted"),
    });
    const sent = await sb.json(["send", second.data.spawned.id, "--wait", "a follow-up"]);
    expect(sent.data.results[0].status).toBe("exhausted");
    expect((await sb.json(["wait", long])).data.results[0].status).toBe("completed");
    const b = await sb.json(["budget"]);
    expect(b.data.exhausted).toContain("turns used");
    await sb.run(["budget", "--clear"]);
    expect((await sb.json(["spawn", "--wait", "after clearing"])).data.results[0].status).toBe("completed");
  });

  it("counts only the turns that ran, from the moment the budget was set", async () => {
    await sb.run(["budget", "--clear"]);
    for (const i of [1, 2, 3])
      expect((await sb.json(["spawn", "--wait", `before the budget ${i}`])).data.results[0].status).toBe(
        "completed",
      );
    // Without a budget the tree's whole history shows; a budget set now starts at zero.
    expect((await sb.json(["budget"])).data.used.turns).toBeGreaterThanOrEqual(3);
    const set = await sb.json(["budget", "--turns", "1"]);
    expect(set.data.used.turns).toBe(0);
    expect(set.data.exhausted).toBeNull();
    expect((await sb.json(["spawn", "--wait", "the one turn"])).data.results[0].status).toBe("completed");
    for (const refused of ["second", "third"]) {
      const r = await sb.json(["spawn", "--wait", refused]);
      expect(r.exitCode).toBe(4);
      expect(r.data.results[0].status).toBe("exhausted");
    }
    // The two refused turns never ran: they use nothing.
    expect((await sb.json(["budget"])).data.used.turns).toBe(1);
    expect((await sb.run(["budget"])).stdout).toMatch(/^turns +1 of 1$/m);
    // Raising the limit keeps the budget's start: the turn that ran still counts.
    expect((await sb.json(["budget", "--turns", "2"])).data.used.turns).toBe(1);
    await sb.run(["budget", "--clear"]);
  });
});
