// Issue 15 on a real agent CLI (Claude Code, pinned) against the scripted endpoint: caps end the CLI's turn
// from outside (its whole process group, outcome exhausted naming the cap), and muster ask through its shell.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir } from "../../scripts/pinned-clis.mjs";
import { groupAlive } from "../../src/util/process-group.js";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

interface Endpoint {
  url: string;
  requests: { api: string | null; scenario: string }[];
  setScenario(s: string): void;
  close(): Promise<void>;
}

describe("caps on a real CLI (claude, scripted endpoint)", { timeout: 180_000 }, () => {
  const sb = useSandbox("mt-caps-claude");
  let ep: Endpoint;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    const binDir = cliBinDir("claude") as string;
    if (!fs.existsSync(path.join(binDir, "claude")))
      throw new Error("claude is not installed: run node scripts/install-clis.mjs (npm test does this)");
    ep = (await startEndpoint()) as Endpoint;
    env = {
      ...prepareCli("claude", ep.url, sb.env.HOME as string),
      CLAUDE_CODE_MAX_RETRIES: "0",
      PATH: `${binDir}${path.delimiter}${sb.env.PATH}`,
    };
  });
  afterAll(async () => {
    await ep?.close();
  });

  it("--idle-timeout and --max-time end a slow stream exhausted; no process of the CLI is left", async () => {
    ep.setScenario("slow");
    const before = ep.requests.length;
    // The slow scenario streams a chunk every 500 ms for a minute: never idle for 15 s (the CLI's own start-up
    // under load may take several), so the wall clock is what ends it.
    const s = await sb.json(
      [
        "spawn",
        "--agent",
        "claude",
        "--model",
        TEST_MODELS.claude as string,
        "--idle-timeout",
        "15s",
        "--max-time",
        "30s",
        "write a long story",
      ],
      { env },
    );
    expect(s.exitCode, s.stderr).toBe(0);
    await until(() => ep.requests.slice(before).some((q) => q.api !== null && q.scenario === "slow"), 60_000);
    const w = await sb.json(["wait", s.data.id, "--timeout", "120s"], { env });
    expect(w.data.results[0], JSON.stringify(w.data)).toMatchObject({
      status: "exhausted",
      reason: expect.stringContaining("max-time 30s"),
    });
    const pgid = readEvents(s.data.artifactDir).find((e) => e.type === "runner_started")?.pid as number;
    await until(() => !groupAlive(pgid), 5_000);
  });

  it("--max-tool-calls 1 ends the turn at the CLI's first tool call", async () => {
    ep.setScenario("tool");
    const cwd = path.join(sb.cwd, "tool");
    fs.mkdirSync(cwd, { recursive: true });
    const args = ["--agent", "claude", "--model", TEST_MODELS.claude as string, "--cwd", cwd];
    const s = await sb.json(["spawn", ...args, "--max-tool-calls", "1", "make the file"], { env });
    expect(s.exitCode, s.stderr).toBe(0);
    const w = await sb.json(["wait", s.data.id, "--timeout", "120s"], { env });
    expect(w.data.results[0], JSON.stringify(w.data)).toMatchObject({
      status: "exhausted",
      reason: expect.stringContaining("max-tool-calls 1"),
    });
  });

  it("claude's shell tool runs muster ask: the question reaches the parent, the answer reaches the model", async () => {
    ep.setScenario("ask");
    const s = await sb.json(
      ["spawn", "--agent", "claude", "--model", TEST_MODELS.claude as string, "pick a color"],
      { env },
    );
    expect(s.exitCode, s.stderr).toBe(0);
    const q = await until(
      async () =>
        (await sb.json(["inbox", "--peek"], { env })).data.requests.find(
          (r: { child: string }) => r.child === s.data.id,
        ),
      90_000,
      200,
    );
    expect(q).toMatchObject({ type: "question", text: "Which color?" });
    expect((await sb.run(["answer", q.id, "teal"], { env })).exitCode).toBe(0);
    const w = await sb.json(["wait", s.data.id, "--timeout", "120s"], { env });
    expect(w.data.results[0], JSON.stringify(w.data)).toMatchObject({ status: "completed" });
    expect((await sb.run(["result", s.data.id], { env })).stdout).toContain("PARENT SAID:");
    expect((await sb.run(["result", s.data.id], { env })).stdout).toContain("teal");
  });
});
