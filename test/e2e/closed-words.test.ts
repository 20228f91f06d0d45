import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-closedwords");

/** What `ls --json` shows of each child, by id. */
async function lsById(): Promise<
  Map<
    string,
    { live: { state: string; detail?: string }; lastOutcome: string; lastActivity: { text: string } }
  >
> {
  const ls = await sb.json(["ls"]);
  return new Map(ls.data.children.map((c: { id: string }) => [c.id, c]));
}

describe("one word per state: closed is not cancelled", () => {
  it("a workflow's step children, closed once their steps completed, show closed (last turn completed), never cancelled", async () => {
    const r = await sb.json(["workflow", "run", "review-chain", "Add a flag"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const ids = r.data.steps.map((s: { childId: string }) => s.childId);
    const ls = await lsById();
    for (const id of ids)
      expect(ls.get(id)).toMatchObject({
        live: { state: "closed", detail: "closed: its workflow step settled" },
        lastOutcome: "completed",
        lastActivity: { text: "exited (closed)" },
      });
    const human = await sb.run(["ls"]);
    expect(human.stdout).toMatch(/ closed +completed /);
    expect(human.stdout).not.toMatch(/cancelled/);
  });

  it("cancel says the word ls says: closed for an idle child, cancelled for a running turn", async () => {
    const idle = (await sb.json(["spawn", "--wait", "idle one"])).data.spawned.id as string;
    const running = (await sb.json(["spawn", "mock: hang"])).data.id as string;
    await until(async () => (await sb.json(["status", running])).data.status === "running", 20_000);
    const a = await sb.run(["cancel", idle]);
    expect(a.stdout).toBe(`${idle.slice(-8)} closed\n`);
    const b = await sb.json(["cancel", running]);
    expect(b.data.cancelled[0]).toMatchObject({ id: running, state: "cancelled" });
    const ls = await lsById();
    expect(ls.get(idle)).toMatchObject({
      live: { state: "closed", detail: "closed by muster cancel" },
      lastOutcome: "completed",
    });
    expect(ls.get(running)).toMatchObject({ live: { state: "cancelled" }, lastOutcome: "cancelled" });
    expect((await sb.run(["cancel", idle])).stdout).toBe(`${idle.slice(-8)} already closed\n`);
    expect((await sb.run(["cancel", running])).stdout).toBe(`${running.slice(-8)} already cancelled\n`);
  });

  it("status of a closed child shows no pane (it is gone), in words and in --json", async () => {
    const id = (await sb.json(["spawn", "--wait", "closed soon"])).data.spawned.id as string;
    const open = (await sb.json(["status", id])).data;
    expect(open).toMatchObject({ paneClosed: false, pane: { paneId: expect.stringMatching(/^%\d+$/) } });
    expect(open.attachCommand).not.toBeNull();
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    const closed = await sb.json(["status", id]);
    expect(closed.data).toMatchObject({
      status: "closed",
      pane: null,
      paneClosed: true,
      attachCommand: null,
    });
    const human = (await sb.run(["status", id])).stdout;
    expect(human).toMatch(/^pane +- \(closed\)$/m);
    expect(human).toMatch(/^attach +-$/m);
    expect(human).not.toContain(open.pane.paneId);
    const ls = (await sb.json(["ls"])).data.children.find((c: { id: string }) => c.id === id);
    expect(ls).toMatchObject({ pane: null, paneClosed: true });
  });
});
