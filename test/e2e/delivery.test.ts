import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-deliv");
const idle = (id: string) =>
  until(async () => (await sb.json(["status", id])).data.status === "idle", 15_000, 100);
const inbox = async () => await sb.run(["inbox", "--json"]);

describe("coordinated delivery: each completion is delivered once, durably", () => {
  it("completions that finish while no parent runs wait in the inbox; reading them consumes them", async () => {
    const a = (await sb.json(["spawn", "first\nmock: sleep=0.3"])).data.id as string;
    const b = (await sb.json(["spawn", "second\nmock: sleep=0.3"])).data.id as string;
    await idle(a);
    await idle(b);
    const peek = JSON.parse((await sb.run(["inbox", "--json", "--peek"])).stdout);
    expect(peek.records.map((r: { id: string }) => r.id).sort()).toEqual([a, b].sort());
    const rec = peek.records.find((r: { id: string }) => r.id === a);
    expect(rec).toMatchObject({ recordId: `${a}:${rec.turnId}`, status: "completed", agent: "mock" });
    expect(rec.output.file).toMatch(/outputs\/[0-9a-f-]{36}\.md$/);
    expect(rec.text).toBeUndefined(); // references, not outputs
    const got = JSON.parse((await inbox()).stdout);
    expect(got.records).toHaveLength(2);
    expect(JSON.parse((await inbox()).stdout).records).toEqual([]);
  });

  it("muster result and muster wait consume the record they return", async () => {
    const a = (await sb.json(["spawn", "read by result"])).data.id as string;
    await idle(a);
    await sb.run(["result", a]);
    const b = (await sb.json(["spawn", "read by wait"])).data.id as string;
    await sb.run(["wait", b]);
    const c = (await sb.json(["spawn", "left alone"])).data.id as string;
    await idle(c);
    expect(JSON.parse((await inbox()).stdout).records.map((r: { id: string }) => r.id)).toEqual([c]);
  });

  it("a manifest handed on without its receipts (a parent killed between the two) is delivered again, then never", async () => {
    // `--peek` stops where a parent killed after printing the manifest stops: nothing is written between the
    // manifest and its receipts, so the two leave the same state behind.
    const a = (await sb.json(["spawn", "crash window"])).data.id as string;
    await idle(a);
    const handed = await sb.run(["inbox", "--json", "--peek"]);
    expect(handed.exitCode).toBe(0);
    expect(JSON.parse(handed.stdout).records.map((r: { id: string }) => r.id)).toEqual([a]);
    const again = JSON.parse((await inbox()).stdout);
    expect(again.records.map((r: { id: string }) => r.id)).toEqual([a]);
    expect(JSON.parse((await inbox()).stdout).records).toEqual([]);
  });

  it("a child lost while no parent runs is delivered as lost", async () => {
    const a = (await sb.json(["spawn", "mock: crash"])).data.id as string;
    // The next look at the child (here: ls) proves the host dead and records the completion.
    await until(
      async () =>
        (await sb.json(["ls"])).data.children.find((c: { id: string }) => c.id === a).status === "lost",
      15_000,
      200,
    );
    const got = JSON.parse((await inbox()).stdout);
    expect(got.records.find((r: { id: string }) => r.id === a)).toMatchObject({ status: "lost" });
  });
});

describe("explicit groups", () => {
  it("members are withheld until the group is sealed and all settled, then delivered together; late members are refused", async () => {
    const a = (await sb.json(["spawn", "--group", "review:1", "part a\nmock: sleep=0.2"])).data.id as string;
    const b = (await sb.json(["spawn", "--group", "review:1", "part b\nmock: sleep=1.5"])).data.id as string;
    await idle(a);
    let box = JSON.parse((await sb.run(["inbox", "--json", "--peek"])).stdout);
    expect(box.records.map((r: { id: string }) => r.id)).not.toContain(a);
    expect(box.waitingGroups).toEqual([
      { groupId: "review:1", sealed: false, members: 2, settled: expect.any(Number) },
    ]);
    await idle(b);
    box = JSON.parse((await sb.run(["inbox", "--json", "--peek"])).stdout);
    expect(box.records.map((r: { id: string }) => r.id)).not.toContain(b); // all settled, but not sealed
    const w = await sb.json(["wait", "--group", "review:1"]);
    expect(w.exitCode).toBe(0);
    expect(w.data.results.map((r: { id: string }) => r.id).sort()).toEqual([a, b].sort());
    const late = await sb.run(["spawn", "--group", "review:1", "too late"]);
    expect(late.exitCode).toBe(2);
    expect(late.stderr).toContain("sealed");
    // wait consumed them: the inbox has nothing of the group left.
    box = JSON.parse((await sb.run(["inbox", "--json"])).stdout);
    expect(box.records.filter((r: { id: string }) => r.id === a || r.id === b)).toEqual([]);
    expect(box.waitingGroups).toEqual([]);
  });

  it("a sealed group whose members all settled is delivered whole by the inbox", async () => {
    const a = (await sb.json(["spawn", "--group", "g2", "one"])).data.id as string;
    const b = (await sb.json(["spawn", "--group", "g2", "--seal", "two"])).data.id as string;
    await idle(a);
    await idle(b);
    const box = JSON.parse((await sb.run(["inbox", "--json"])).stdout);
    expect(box.records.map((r: { id: string }) => r.id).sort()).toEqual([a, b].sort());
  });

  it("group ids and limits are checked before anything is created", async () => {
    const before = (await sb.json(["ls"])).data.children.length;
    for (const bad of ["", "-x", "a/b", "x".repeat(129)]) {
      const r = await sb.run(["spawn", "--group", bad, "x"]);
      expect(r.exitCode, bad).toBe(2);
    }
    // A full group (32 members), written directly: the next spawn into it must be refused without a child.
    const primary = fs.readdirSync(path.join(sb.home, "primaries"))[0]!;
    const groups = path.join(sb.home, "primaries", primary, "groups");
    fs.mkdirSync(groups, { recursive: true });
    const member = (k: number, v: string) => `01a22900-0000-7000-${v}000-${String(k).padStart(12, "0")}`;
    const members = Array.from({ length: 32 }, (_, k) => ({ id: member(k, "8"), turnId: member(k, "9") }));
    fs.writeFileSync(
      path.join(groups, "full.json"),
      JSON.stringify({ v: 1, groupId: "full", members, sealed: false, createdAt: new Date().toISOString() }),
    );
    const full = await sb.run(["spawn", "--group", "full", "x"]);
    expect(full.exitCode).toBe(2);
    expect(full.stderr).toContain("32 members");
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });
});
