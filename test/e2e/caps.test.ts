import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, pidAlive, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-caps");

// biome-ignore lint/suspicious/noExplicitAny: loosely read CLI output
type Json = any;

async function spawn(args: string[]): Promise<{ id: string; dir: string }> {
  const r = await sb.json(["spawn", ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return { id: r.data.id, dir: r.data.artifactDir };
}

async function settled(id: string): Promise<Json> {
  const w = await sb.json(["wait", id, "--timeout", "60s"]);
  return w.data.results[0];
}

const runnerPids = (dir: string): number[] =>
  readEvents(dir)
    .filter((e) => e.type === "runner_started")
    .map((e) => e.pid as number);

const toolStarts = (dir: string): number =>
  readEvents(dir).filter((e) => e.type === "tool_activity" && e.phase === "start").length;

describe("caps enforced outside the model", () => {
  it("--max-time ends a hung turn exhausted, naming the cap, and its process group is gone", async () => {
    const c = await spawn(["--max-time", "2s", "hang here\nmock: hang"]);
    const r = await settled(c.id);
    expect(r).toMatchObject({ status: "exhausted", reason: expect.stringContaining("max-time 2s") });
    for (const pid of runnerPids(c.dir)) expect(pidAlive(pid)).toBe(false);
    // The child stays for follow-ups: a cap ends the turn, not the child.
    expect((await sb.json(["status", c.id])).data.status).toBe("idle");
  });

  it("--idle-timeout ends a turn with no agent output, but not one that keeps talking", async () => {
    const quiet = await spawn(["--idle-timeout", "1500ms", "silent\nmock: sleep=30"]);
    const busy = await spawn(["--idle-timeout", "1500ms", "chatty\nmock: sleep=4 tools=8"]);
    expect(await settled(quiet.id)).toMatchObject({
      status: "exhausted",
      reason: expect.stringContaining("idle-timeout 1.5s"),
    });
    expect((await settled(busy.id)).status).toBe("completed");
  });

  it("--max-tool-calls ends the turn once the agent starts that many tool calls", async () => {
    const c = await spawn(["--max-tool-calls", "2", "tools\nmock: sleep=8 tools=8"]);
    const r = await settled(c.id);
    expect(r).toMatchObject({ status: "exhausted", reason: expect.stringContaining("max-tool-calls 2") });
    expect(toolStarts(c.dir)).toBeLessThan(8);
  });

  it("--max-turns and --max-tokens refuse later turns without running them", async () => {
    const turns = await spawn(["--max-turns", "1", "one turn only"]);
    const tokens = await spawn(["--max-tokens", "5", "a few tokens"]);
    expect((await settled(turns.id)).status).toBe("completed");
    // The mock reports its usage just before its final record: the cap is reached there, and ends the turn.
    expect(await settled(tokens.id)).toMatchObject({
      status: "exhausted",
      reason: expect.stringContaining("max-tokens 5"),
    });
    for (const c of [turns, tokens]) {
      const s = await sb.json(["send", c.id, "again"]);
      expect(s.exitCode, s.stderr).toBe(0);
      await until(async () => readEvents(c.dir).filter((e) => e.type === "completion").length === 2, 30_000);
      const last = readEvents(c.dir).filter((e) => e.type === "completion")[1]!;
      expect(last.status).toBe("exhausted");
      expect(runnerPids(c.dir)).toHaveLength(1);
    }
    const last = (dir: string) => readEvents(dir).filter((e) => e.type === "completion")[1]!.reason;
    expect(last(turns.dir)).toContain("max-turns 1");
    expect(last(tokens.dir)).toContain("max-tokens 5 (this child and its children used");
  });

  it("a profile's caps apply, and a bad cap there is a warning, not a failure", async () => {
    const file = path.join(sb.cwd, ".muster", "agents", "capped.md");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      "---\ndescription: capped\nrunner: mock\ncaps:\n  maxTime: 2\n  maxTurns: zero\n---\n",
    );
    const r = await sb.json(["spawn", "--agent", "capped", "mock: hang"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.warnings.join("\n")).toContain("caps.maxTurns");
    const meta = JSON.parse(fs.readFileSync(path.join(r.data.artifactDir, "meta.json"), "utf8"));
    expect(meta.caps).toEqual({ maxTimeMs: 2000 });
    expect((await sb.json(["status", r.data.id])).data.caps).toEqual({ maxTimeMs: 2000 });
    expect((await sb.run(["status", r.data.id])).stdout).toContain("caps       maxTimeMs=2000");
    expect(await settled(r.data.id)).toMatchObject({ status: "exhausted" });
  });

  it("a child cannot escape its parent's cap by spawning: it inherits what is left, and both end", async () => {
    // The parent is a command agent whose turn runs `muster spawn --wait` for a hung child.
    const r = await sb.run([
      "spawn",
      "--json",
      "--agent",
      "command",
      "--max-time",
      "4s",
      "delegate",
      "--",
      process.execPath,
      BIN,
      "spawn",
      "--wait",
      "grandchild\nmock: hang",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const parent = JSON.parse(r.stdout).id as string;
    const child = await until(
      async () => (await sb.json(["ls"])).data.children.find((c: Json) => c.parent === parent),
      20_000,
      100,
    );
    const meta = JSON.parse(fs.readFileSync(path.join(child.artifactDir, "meta.json"), "utf8"));
    expect(meta.caps.maxTimeMs).toBeGreaterThan(0);
    expect(meta.caps.maxTimeMs).toBeLessThanOrEqual(4000);
    const w = await sb.json(["wait", parent, child.id, "--timeout", "60s"]);
    for (const x of w.data.results) expect(x).toMatchObject({ status: "exhausted" });
  });

  it("--idle-timeout: a parent that says nothing while its child works is not idle", async () => {
    const r = await sb.run([
      "spawn",
      "--json",
      "--agent",
      "command",
      "--idle-timeout",
      "2s",
      "delegate",
      "--",
      process.execPath,
      BIN,
      "spawn",
      "--wait",
      "busy child\nmock: sleep=6 tools=12",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const parent = JSON.parse(r.stdout).id as string;
    expect(await settled(parent)).toMatchObject({ status: "completed" });
  });

  it("a tree cap (muster budget --max-tool-calls) ends running turns everywhere and refuses new children", async () => {
    const b = await sb.json(["budget", "--max-tool-calls", "4"]);
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.data.budget.caps).toEqual({ maxToolCalls: 4 });
    const a = await spawn(["tree a\nmock: sleep=12 tools=12"]);
    const c = await spawn(["tree c\nmock: sleep=12 tools=12"]);
    for (const x of [a, c])
      expect(await settled(x.id)).toMatchObject({
        status: "exhausted",
        reason: expect.stringContaining("the tree"),
      });
    expect(toolStarts(a.dir) + toolStarts(c.dir)).toBeLessThan(24);
    const refused = await sb.run(["spawn", "one more"]);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("max-tool-calls");
    // Setting limits keeps the caps; --clear removes both.
    expect((await sb.json(["budget", "--turns", "100"])).data.budget.caps).toEqual({ maxToolCalls: 4 });
    expect((await sb.run(["budget", "--clear"])).exitCode).toBe(0);
  });

  it("bad cap values are refused before anything starts", async () => {
    for (const flags of [
      ["--max-time", "soon"],
      ["--max-turns", "0"],
      ["--max-cost", "-1"],
      ["--max-tool-calls", "1.5"],
    ]) {
      const r = await sb.run(["spawn", ...flags, "nope"]);
      expect(r.exitCode, flags.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
