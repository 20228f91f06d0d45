import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-deliv");
const idle = (id: string) =>
  until(async () => (await sb.json(["status", id])).data.status === "idle", 15_000, 100);
const inbox = async (env: NodeJS.ProcessEnv = {}) => await sb.run(["inbox", "--json"], { env });

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

  it("a parent killed after handing a manifest on but before its receipts sees it again (the one duplicate window), then never", async () => {
    const a = (await sb.json(["spawn", "crash window"])).data.id as string;
    await idle(a);
    const crashed = await inbox({ MUSTER_FAULT: "inbox-before-receipt" });
    expect(crashed.exitCode).not.toBe(0);
    expect(JSON.parse(crashed.stdout).records.map((r: { id: string }) => r.id)).toEqual([a]);
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
