// Aider cannot be installed here (Python, not on npm): the same checks run against a stand-in that takes
// exactly aider's documented one-shot flags and refuses anything else (test/fixtures/aider-standin.mjs).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { groupAlive } from "../../src/util/process-group.js";
import { REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const STANDIN = path.join(REPO, "test", "fixtures", "aider-standin.mjs");

describe("aider as a muster child (stand-in for the real CLI)", () => {
  const sb = useSandbox("mt-aider");
  const env = { MUSTER_AIDER_BIN: STANDIN };
  const workDir = (tag: string) => {
    const d = path.join(sb.cwd, tag);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  const spawnWait = async (args: string[], extra: Record<string, string> = {}) => {
    const r = await sb.json(["spawn", "--wait", "--agent", "aider", ...args], { env: { ...env, ...extra } });
    return { id: r.data.spawned.id as string, result: r.data.results[0], exitCode: r.exitCode };
  };

  it("completes with the answer and usage; the edit ran in the child's cwd and showed in the pane", async () => {
    const cwd = workDir("tool");
    const r = await spawnWait(["--cwd", cwd, "--model", "anthropic:claude-sonnet-4-5", "make the file"]);
    expect(r.result.status, r.result.reason).toBe("completed");
    expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8").trim()).toBe("hello");
    const events = readEvents(r.result.artifactDir);
    expect(events.filter((e) => e.type === "tool_activity").map((e) => [e.phase, e.name, e.summary])).toEqual(
      [
        ["start", "edit", "out.txt"],
        ["end", "edit", "out.txt"],
      ],
    );
    const done = events.find((e) => e.type === "completion");
    expect(done.usage).toMatchObject({ input: 1200, output: 30 });
    const pane = await sb.run(["capture", r.id, "--lines", "100"], { env });
    expect(pane.stdout).toContain("out.txt");
  });

  it("muster send restores aider's chat history for turn 2", async () => {
    const r = await spawnWait(["--cwd", workDir("resume"), "first question"]);
    expect(r.result.text.trim()).toBe("stand-in answer 1");
    const second = await sb.json(["send", r.id, "--wait", "second question"], { env });
    expect(second.data.results[0].status).toBe("completed");
    expect(second.data.results[0].text.trim()).toBe("stand-in answer 2");
  });

  it("a failing aider settles errored with its message", async () => {
    const r = await spawnWait(["--cwd", workDir("fail"), "anything"], { AIDER_STANDIN_FAIL: "1" });
    expect(r.result.status).toBe("errored");
    expect(r.result.reason).toMatch(/told to fail/);
  });

  it("a quota error (litellm's text as aider prints it) settles errored with providerError and pauses the tree", async () => {
    const r = await spawnWait(["--cwd", workDir("quota"), "anything"], { AIDER_STANDIN_FAIL: "quota" });
    try {
      expect(r.result.status).toBe("errored");
      expect(r.result.providerError).toMatchObject({
        kind: "quota",
        message: expect.stringMatching(/^litellm\.RateLimitError: .*exceeded your current quota/),
      });
      expect(r.result.reason).toMatch(/^litellm\.RateLimitError: /);
      const done = readEvents(r.result.artifactDir).filter((e) => e.type === "completion");
      expect(done.at(-1)!.providerError.kind).toBe("quota");
      // The tree pauses: a sibling spawned now is held until resume-tree.
      const sib = await sb.json(["spawn", "--agent", "mock", "after the quota"], { env });
      expect(sib.data.paused, sib.stderr).toMatchObject({ kind: "quota" });
      await until(() => readEvents(sib.data.artifactDir).some((e) => e.type === "turn_held"), 30_000);
      expect(readEvents(sib.data.artifactDir).some((e) => e.type === "turn_started")).toBe(false);
      const resumed = await sb.json(["resume-tree"], { env });
      expect(resumed.data.resumed).toMatchObject({ kind: "quota", child: r.id });
      const after = await sb.json(["wait", sib.data.id, "--timeout", "60s"], { env });
      expect(after.data.results[0].status).toBe("completed");
    } finally {
      await sb.run(["resume-tree"], { env });
    }
  });

  it("a refused key and an overloaded provider are told apart from a quota", async () => {
    try {
      const auth = await spawnWait(["--cwd", workDir("auth"), "anything"], { AIDER_STANDIN_FAIL: "auth" });
      expect(auth.result.providerError).toMatchObject({ kind: "auth" });
      await sb.run(["resume-tree"], { env });
      const busy = await spawnWait(["--cwd", workDir("busy"), "anything"], {
        AIDER_STANDIN_FAIL: "overloaded",
      });
      expect(busy.result).toMatchObject({ status: "errored", providerError: { kind: "overloaded" } });
    } finally {
      await sb.run(["resume-tree"], { env });
    }
  });

  it("muster agents says whether each agent's CLI is here", async () => {
    const ready = (await sb.json(["agents"], { env })).data.agents.find(
      (a: { name: string }) => a.name === "aider",
    );
    expect(ready).toMatchObject({ ready: true });
    const missing = (await sb.json(["agents"], { env: { MUSTER_AIDER_BIN: "/nonexistent/aider" } })).data
      .agents;
    expect(missing.find((a: { name: string }) => a.name === "aider")).toMatchObject({
      ready: false,
      notReady: "MUSTER_AIDER_BIN=/nonexistent/aider is not an executable file",
    });
    expect((await sb.run(["agents"], { env })).stdout).toMatch(/^aider\s+aider\s+yes\s/m);
  });

  it("a CLI that is not installed is refused before anything starts, naming how to get it", async () => {
    const before = (await sb.json(["ls"])).data.children.length;
    const r = await sb.run(["spawn", "--agent", "aider", "hello"], { env: { MUSTER_AIDER_BIN: "" } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/runs aider, which is not installed here .*MUSTER_AIDER_BIN/);
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });

  it("profile fields aider cannot apply are warned about at spawn, not dropped silently", async () => {
    fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "narrow-aider.md"),
      "---\ndescription: narrow\nrunner: aider\ntools: Read\nmaxTurns: 3\n---\nBe brief.\n",
    );
    const r = await sb.json(
      ["spawn", "--wait", "--agent", "narrow-aider", "--cwd", workDir("narrow"), "hi"],
      { env },
    );
    expect(r.data.spawned.warnings).toEqual([
      'agent "narrow-aider": aider has no way to apply tools; it is ignored',
      'agent "narrow-aider": aider has no way to apply maxTurns; it is ignored',
    ]);
    expect(r.data.results[0].status).toBe("completed");
  });

  it("muster cancel stops a running aider and its process group", async () => {
    const s = await sb.json(["spawn", "--agent", "aider", "--cwd", workDir("cancel"), "slow"], {
      env: { ...env, AIDER_STANDIN_SLOW: "1" },
    });
    const dir = s.data.artifactDir as string;
    const pgid = await until(() => readEvents(dir).find((e) => e.type === "runner_started")?.pid as number);
    await until(() => readEvents(dir).some((e) => e.type === "turn_started"));
    expect((await sb.json(["cancel", s.data.id], { env })).exitCode).toBe(0);
    const st = await until(async () => {
      const x = (await sb.json(["status", s.data.id], { env })).data;
      return x.turnList?.[0]?.status === "cancelled" ? x : undefined;
    }, 20_000);
    expect(st.lastOutcome).toBe("cancelled");
    await until(() => !groupAlive(pgid), 5_000);
  });
});
