// The quota breaker with the mock agent (its `mock: provider=…` reports a provider error as an agent CLI
// does): a quota error pauses the tree, a running sibling finishes its turn, nothing new starts (a spawn
// still creates its child, whose turn waits, shown as paused), the parent is told once, resume-tree lets the
// held turns run; a pause with a reset time lifts by itself; a rate limit that lifts soon is waited out.
import * as fs from "node:fs";
import * as path from "node:path";
import { render } from "ink-testing-library";
import { createElement } from "react";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { coreActions } from "../../src/tui/actions.js";
import { Top } from "../../src/tui/app.js";
import { TopSource } from "../../src/tui/source.js";
import { readEvents, until, useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-pause");

// biome-ignore lint/suspicious/noExplicitAny: loosely read CLI output
type Json = any;

async function spawn(prompt: string): Promise<Json> {
  const r = await sb.json(["spawn", prompt]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.data;
}

const types = (dir: string): string[] => readEvents(dir).map((e) => e.type);
const pauseFile = () => {
  const primaries = path.join(sb.home, "primaries");
  const [p] = fs.readdirSync(primaries);
  return path.join(primaries, p!, "pause.json");
};

describe("the tree pauses on a quota error and resume-tree continues it", () => {
  it("pauses, holds new turns visibly, tells the parent once, and resumes", async () => {
    const gate = path.join(sb.cwd, "gate-1");
    // A sibling mid-turn when the quota error comes: it finishes that turn.
    const running = await spawn(`long task\nmock: gate=${encodeURIComponent(gate)}`);
    await until(() => types(running.artifactDir).includes("runner_started"), 20_000);
    const failing = await spawn("needs the model\nmock: provider=quota");
    const w1 = await sb.json(["wait", failing.id, "--timeout", "60s"]);
    expect(w1.data.results[0]).toMatchObject({
      status: "errored",
      providerError: { kind: "quota", message: "mock provider error: quota" },
    });
    // The parent hears of the pause with the completion that caused it …
    expect(w1.data.treePaused).toMatchObject({ kind: "quota", child: failing.id });
    expect(fs.existsSync(pauseFile())).toBe(true);
    // Told once: the inbox (MCP's delivery manifest too) does not tell it again.
    const inbox = await sb.json(["inbox"]);
    expect(inbox.data.treePaused).toBeUndefined();

    // … a spawn now still creates its child, and says its turn waits; the turn shows as paused, not started.
    const r = await sb.run(["spawn", "after the pause"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain("the tree is paused (quota");
    const held = await spawn("held too");
    expect(held.paused).toMatchObject({ kind: "quota" });
    await until(() => types(held.artifactDir).includes("turn_held"), 20_000);
    const st = await sb.json(["status", held.id]);
    expect(st.data.live).toMatchObject({
      state: "queued",
      detail: expect.stringContaining("paused: mock provider error: quota"),
    });
    expect(st.data.treePaused).toMatchObject({ kind: "quota" });
    const ls = await sb.run(["ls"]);
    expect(ls.stdout).toContain("the tree is paused (quota");
    // muster top: the held child's row says paused, the footer that the tree is.
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const source = new TopSource(m, { minIntervalMs: 200 });
    try {
      const ui = render(
        createElement(Top, { source, actions: coreActions(m), size: { columns: 160, rows: 30 } }),
      );
      await until(() => (ui.lastFrame() ?? "").includes("TREE PAUSED (quota)"), 15_000);
      const row = (ui.lastFrame() ?? "").split("\n").find((l) => l.includes(held.id.slice(-8)));
      expect(row).toContain("queued");
      ui.unmount();
    } finally {
      await source.close();
    }

    // The running sibling finishes its turn; its result does not carry the notice again (once per pause).
    fs.writeFileSync(gate, "");
    const w2 = await sb.json(["wait", running.id, "--timeout", "60s"]);
    expect(w2.data.results[0].status).toBe("completed");
    expect(w2.data.treePaused).toBeUndefined();
    // Its next turn is held as well.
    const sent = await sb.json(["send", running.id, "and another"]);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.data.paused).toMatchObject({ kind: "quota" });
    await until(() => types(running.artifactDir).includes("turn_held"), 20_000);
    expect(types(held.artifactDir)).not.toContain("turn_started");

    const resumed = await sb.json(["resume-tree"]);
    expect(resumed.data.resumed).toMatchObject({ kind: "quota", child: failing.id });
    expect(fs.existsSync(pauseFile())).toBe(false);
    const w3 = await sb.json(["wait", held.id, running.id, "--timeout", "60s"]);
    expect(w3.data.results.map((x: Json) => x.status)).toEqual(["completed", "completed"]);
    expect((await sb.json(["resume-tree"])).data.resumed).toBeNull();
  });

  it("a pause with a reset time lifts by itself once it has gone by", async () => {
    const until3s = Date.now() + 3000;
    const failing = await spawn(`needs the model\nmock: provider=quota provider-until=${until3s}`);
    const w = await sb.json(["wait", failing.id, "--timeout", "60s"]);
    expect(w.data.results[0].providerError).toMatchObject({
      kind: "quota",
      resetAt: new Date(until3s).toISOString(),
    });
    expect(w.data.treePaused.resetAt).toBe(new Date(until3s).toISOString());
    const next = await spawn("after the reset");
    const done = await sb.json(["wait", next.id, "--timeout", "60s"]);
    expect(done.data.results[0].status).toBe("completed");
    const ev = readEvents(next.artifactDir);
    const heldAt = ev.find((e) => e.type === "turn_held");
    // Held (unless the reset had passed by the time its host looked), and started only after the reset.
    const started = Date.parse(ev.find((e) => e.type === "turn_started")!.ts);
    if (heldAt) expect(started).toBeGreaterThanOrEqual(until3s - 50);
  });

  it("a rate limit that lifts within the bound is waited out and the turn runs again", async () => {
    const lifts = Date.now() + 2500;
    const c = await spawn(`busy provider\nmock: provider=rate_limit provider-until=${lifts}`);
    const w = await sb.json(["wait", c.id, "--timeout", "60s"]);
    expect(w.data.results[0].status).toBe("completed");
    const ev = readEvents(c.artifactDir);
    expect(ev.filter((e) => e.type === "rate_limited")).toEqual([
      expect.objectContaining({ resetAt: new Date(lifts).toISOString(), attempt: 1 }),
    ]);
    expect(ev.filter((e) => e.type === "runner_started")).toHaveLength(2);
    expect(ev.filter((e) => e.type === "completion")).toHaveLength(1);
    // A rate limit pauses nothing.
    expect((await sb.json(["ls"])).data.treePaused).toBeUndefined();
  });

  it("a parent that reads only its inbox is told of the pause once, with the completion", async () => {
    const failing = await spawn("needs the model\nmock: provider=auth");
    await until(
      () => fs.existsSync(pauseFile()) && types(failing.artifactDir).includes("completion"),
      20_000,
    );
    const first = await sb.json(["inbox"]);
    expect(first.data.treePaused).toMatchObject({ kind: "auth", child: failing.id });
    expect(first.data.records.map((r: Json) => r.providerError?.kind)).toContain("auth");
    expect((await sb.json(["inbox"])).data.treePaused).toBeUndefined();
    expect((await sb.json(["resume-tree"])).data.resumed).toMatchObject({ kind: "auth" });
  });

  it("over MCP: the result carries providerError and the pause, status shows it, a run while paused says so", async () => {
    const client = await connectMcp(sb);
    const call = async (name: string, args: Record<string, unknown>): Promise<Json> => {
      const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 50_000 });
      const text = (r.content as { text: string }[])[0]?.text ?? "";
      expect(r.isError, text).toBeFalsy();
      return JSON.parse(text);
    };
    try {
      const failed = await call("subagents_run", {
        agent: "mock",
        prompt: "mock: provider=quota\nneeds the model",
      });
      expect(failed).toMatchObject({ status: "errored", providerError: { kind: "quota" } });
      expect(failed.treePaused).toMatchObject({ kind: "quota", child: failed.id });
      expect((await call("subagents_status", {})).treePaused).toMatchObject({ kind: "quota" });
      const later = await call("subagents_run", { agent: "mock", prompt: "after", await: false });
      expect(later.treePaused).toMatchObject({ kind: "quota" });
      // The parent lifts the pause itself (subagents_status {resumeTree}); a second lift finds none.
      const lifted = await call("subagents_status", { resumeTree: true });
      expect(lifted.resumed).toMatchObject({ kind: "quota" });
      expect(lifted.treePaused).toBeUndefined();
      expect((await call("subagents_status", { resumeTree: true })).resumed).toBeNull();
      const done = await call("subagents_await", { ids: [later.id] });
      expect(done.results[0].status).toBe("completed");
      expect(done.treePaused).toBeUndefined();
    } finally {
      await client.close();
      await sb.run(["resume-tree"]);
    }
  });

  it("a rate limit with no reset time, or one too far off, fails the turn as before", async () => {
    const c = await spawn(
      `busy provider\nmock: provider=rate_limit provider-until=${Date.now() + 3_600_000}`,
    );
    const w = await sb.json(["wait", c.id, "--timeout", "60s"]);
    expect(w.data.results[0]).toMatchObject({ status: "errored", providerError: { kind: "rate_limit" } });
    expect(types(c.artifactDir)).not.toContain("rate_limited");
  });
});
