/**
 * Best-of-N through MCP: `subagents_run {bestOf, agents}` starts the candidates in worktrees of their own and
 * returns their results in run order; `subagents_compare` shows them and, with `judge`, records a verdict.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, useSandbox, writeProjectAgent } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-mcpbest");
makeRepo(sb.cwd);
const CANDIDATE = path.join(REPO, "test", "fixtures", "candidate-agent.mjs");
const JUDGE = path.join(REPO, "test", "fixtures", "judge-agent.mjs");
for (const [name, argv] of [
  ["writer", [CANDIDATE, "{prompt_file}"]],
  ["judge2", [JUDGE, "{prompt_file}", "2"]],
] as const)
  writeProjectAgent(sb, name, [
    "runner: command",
    "protocol: muster-jsonl",
    `command: ${JSON.stringify([process.execPath, ...argv])}`,
  ]);
fs.appendFileSync(path.join(sb.cwd, ".git", "info", "exclude"), ".muster/\n");

let client: Client;
// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Json = any;
const call = async (
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; data: Json; text: string }> => {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 });
  const text = (r.content as { text: string }[])[0]?.text ?? "";
  return { isError: !!r.isError, text, data: r.isError ? undefined : JSON.parse(text) };
};

describe("best-of-N through MCP", () => {
  beforeAll(async () => {
    client = await connectMcp(sb);
  });
  afterAll(async () => {
    await client.close();
  });

  it("runs the candidates, returns their results in run order, compares them and records a judge's verdict", async () => {
    const run = await call("subagents_run", {
      prompt: "add a file",
      agents: ["mock", "writer"],
      verify: 'test -n "$(git status --porcelain)"',
    });
    expect(run.isError, run.text).toBe(false);
    expect(run.data.group).toMatch(/^best-[0-9a-f]{8}$/);
    expect(run.data.children.map((c: { agent: string }) => c.agent)).toEqual(["mock", "writer"]);
    // The mock changes nothing, so its check fails; the writer's passes.
    expect(run.data.results.map((r: { status: string }) => r.status)).toEqual([
      "failed_verification",
      "completed",
    ]);
    expect(run.data.results[1].isolation.branch).toBe(run.data.children[1].branch);

    const view = await call("subagents_compare", { group: run.data.group });
    expect(view.isError, view.text).toBe(false);
    expect(JSON.stringify(view.data)).toContain(run.data.children[1].id);

    const judged = await call("subagents_compare", { group: run.data.group, judge: "judge2" });
    expect(judged.isError, judged.text).toBe(false);
    expect(judged.data.recorded).toBe(true);
    expect(judged.data.verdict.winner).toBe(run.data.children[1].id);
    expect(judged.data.verdict.reasoning).toContain("saw 2 candidates");
  });

  it("refuses what a best-of run cannot take, in one line, creating nothing", async () => {
    for (const [args, said] of [
      [{ prompt: "x", bestOf: 9 }, /from 2 to 8/],
      [{ prompt: "x", bestOf: 1 }, /from 2 to 8/],
      [{ prompt: "x", bestOf: 2, agent: "mock", agents: ["mock"] }, /not both/],
      [{ prompt: "x", bestOf: 2, groupId: "g1" }, /no group/],
    ] as const) {
      const r = await call("subagents_run", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(r.text).toMatch(said);
    }
    expect((await call("subagents_compare", { group: "best-00000000" })).isError).toBe(true);
  });
});
