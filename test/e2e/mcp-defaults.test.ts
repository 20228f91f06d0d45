import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";

// One default agent for CLI and MCP: a project profile named by $MUSTER_AGENT, and one run slot.
const sb = useSandbox("mt-mcpdef");
const env = { MUSTER_AGENT: "scout", MUSTER_MAX_RUNNING: "1" };
fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
fs.writeFileSync(
  path.join(sb.cwd, ".muster", "agents", "scout.md"),
  "---\ndescription: The default agent of this test.\nrunner: mock\n---\nScout.\n",
);

let client: Client;
// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
async function ok(name: string, args: Record<string, unknown>): Promise<any> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 50_000 });
  const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
  if (r.isError) throw new Error(`${name} failed: ${text}`);
  return JSON.parse(text);
}

// The lifecycle order of the statuses a child with a turn to do goes through.
const RANK: Record<string, number> = { starting: 0, queued: 1, running: 2, idle: 3, closed: 4, lost: 4 };

describe("MCP and CLI share one default and one status", () => {
  beforeAll(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp"],
      env: { ...(sb.env as Record<string, string>), ...env },
      cwd: sb.cwd,
      stderr: "pipe",
    });
    client = new Client({ name: "muster-defaults-test", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("subagents_run without agent runs the CLI's default agent; subagents_await without mode waits for all", async () => {
    const cli = await sb.json(["spawn", "--wait", "from the CLI"], { env });
    expect(cli.data.spawned.agent).toBe("scout");
    const run = await ok("subagents_run", { prompt: "from MCP" });
    expect(run).toMatchObject({ agent: "scout", status: "completed" });

    const a = await ok("subagents_run", { prompt: "one\nmock: sleep=1", await: false });
    const b = await ok("subagents_run", { prompt: "two", await: false });
    const waited = await ok("subagents_await", { ids: [a.id, b.id] });
    expect(waited.results.map((r: { id: string }) => r.id).sort()).toEqual([a.id, b.id].sort());
    expect(waited.pending).toEqual([]);
  });

  it("subagents_run reports the status subagents_status derives, never one ahead of it", async () => {
    // The one run slot is held: a new child's turn cannot be running.
    const hog = await ok("subagents_run", { prompt: "hog\nmock: hang", await: false });
    await until(async () => (await ok("subagents_status", { id: hog.id })).status === "running", 15_000);
    const run = await ok("subagents_run", { prompt: "behind the hog", await: false });
    const status = (await ok("subagents_status", { id: run.id })).status;
    expect(RANK[run.status], `run said ${run.status}, status then said ${status}`).toBeLessThanOrEqual(
      RANK[status]!,
    );
    expect(["starting", "queued"]).toContain(run.status);
    // Once its host waits for the slot: queued, first in its queue, waiting for a slot.
    const queued = await until(async () => {
      const d = await ok("subagents_status", { id: run.id });
      return d.status === "queued" && d.queuedTurns.length === 1 ? d : undefined;
    }, 15_000);
    expect(queued.queuedTurns[0]).toMatchObject({ position: 1, waitingFor: "slot" });
    const cancelled = await ok("subagents_cancel", { ids: [hog.id, run.id] });
    expect(cancelled.cancelled.map((c: { status: string }) => c.status)).toEqual(["closed", "closed"]);
  });
});
