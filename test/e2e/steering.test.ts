// `muster send --mode now|stop`: a follow-up that interrupts the running turn, and a stop that
// ends it and keeps the child. On the mock agent (one-shot: its process group is stopped); the live-session
// path (ACP session/cancel, one process kept) is checked against the real CLIs in test/agents.
import { describe, expect, it } from "vitest";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-steer");

const completions = (dir: string) => readEvents(dir).filter((e) => e.type === "completion");

async function slowChild(): Promise<{ id: string; dir: string; turnId: string }> {
  const s = await sb.json(["spawn", "a long task\nmock: hang"]);
  expect(s.exitCode, s.stderr).toBe(0);
  const id = s.data.id as string;
  await until(async () => (await sb.json(["status", id])).data.status === "running");
  return { id, dir: s.data.artifactDir as string, turnId: s.data.turnId as string };
}

describe("steering a running child", () => {
  it("--mode now: the running turn settles interrupted and the follow-up runs at once in the same child", async () => {
    const c = await slowChild();
    const r = await sb.json(["send", c.id, "--mode", "now", "--wait", "--timeout", "60", "do this instead"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.sent.interrupts).toBe(c.turnId);
    expect(r.data.results[0]).toMatchObject({ turnId: r.data.sent.turnId, status: "completed" });
    const [first, second] = completions(c.dir);
    expect(first).toMatchObject({ turnId: c.turnId, status: "interrupted" });
    expect(first.reason).toMatch(/interrupted by a follow-up/);
    expect(second).toMatchObject({ turnId: r.data.sent.turnId, status: "completed" });
    // The child stays: status idle, not closed.
    expect((await sb.json(["status", c.id])).data.status).toBe("idle");
    // The interrupted turn's own result says so (exit 3, like a cancel).
    const res = await sb.run(["result", c.id, "--turn", c.turnId]);
    expect(res.exitCode).toBe(3);
  });

  it("--mode stop: the turn settles interrupted, nothing else runs, and the child takes a later follow-up", async () => {
    const c = await slowChild();
    const stop = await sb.json(["send", c.id, "--mode", "stop", "--wait", "--timeout", "60"]);
    expect(stop.data.stopped).toEqual({ id: c.id, turnId: c.turnId });
    expect(stop.data.results[0]).toMatchObject({ turnId: c.turnId, status: "interrupted" });
    expect(stop.exitCode).toBe(3);
    expect(completions(c.dir)).toHaveLength(1);
    const st = await sb.json(["status", c.id]);
    expect(st.data.status).toBe("idle");
    const again = await sb.json(["send", c.id, "--wait", "--timeout", "60", "now something short"]);
    expect(again.data.results[0].status).toBe("completed");
  });

  it("--mode stop with nothing running says so and changes nothing; a later turn is not stopped by it", async () => {
    const s = await sb.json(["spawn", "--wait", "--timeout", "60", "quick"]);
    const id = s.data.spawned.id as string;
    const stop = await sb.json(["send", id, "--mode", "stop"]);
    expect(stop.exitCode).toBe(0);
    expect(stop.data).toEqual({ id });
    const next = await sb.json(["send", id, "--wait", "--timeout", "60", "next"]);
    expect(next.data.results[0].status).toBe("completed");
  });

  it("bad input: an unknown mode, or a prompt with stop, is a usage error and queues nothing", async () => {
    const c = await slowChild();
    const bad = await sb.run(["send", c.id, "--mode", "later", "x"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be queue, now or stop/);
    const withPrompt = await sb.run(["send", c.id, "--mode", "stop", "x"]);
    expect(withPrompt.exitCode).toBe(2);
    expect(withPrompt.stderr).toMatch(/give no prompt/);
    expect((await sb.json(["status", c.id])).data.queuedTurns).toEqual([]);
    await sb.run(["cancel", c.id]);
  });
});
