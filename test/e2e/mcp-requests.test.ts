import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-mcpreq");
// A command agent whose turn asks its parent through its shell, as an agent's shell tool would.
fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
fs.writeFileSync(
  path.join(sb.cwd, ".muster", "agents", "asker.md"),
  [
    "---",
    "description: Asks before shipping.",
    "runner: command",
    "command:",
    "  - sh",
    "  - -c",
    `  - 'a=$(muster ask "Ship it?" --choices yes,no) && echo "ship: $a"'`,
    "  - sh",
    "---",
    "",
  ].join("\n"),
);

let client: Client;
// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Data = any;

async function call(
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; text: string }> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 50_000 });
  return { isError: !!r.isError, text: (r.content as { text: string }[])[0]?.text ?? "" };
}
const ok = async (name: string, args: Record<string, unknown>): Promise<Data> => {
  const r = await call(name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.text}`);
  return JSON.parse(r.text);
};

describe("MCP: caps on subagents_run, questions in subagents_inbox, subagents_answer", () => {
  beforeAll(async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp"],
      env: sb.env as Record<string, string>,
      cwd: sb.cwd,
    });
    client = new Client({ name: "muster-test", version: "1.0.0" });
    await client.connect(transport);
  });
  afterAll(async () => {
    await client?.close();
  });

  it("a child's question is listed with its lineage and choices, answered once, and the child goes on", async () => {
    const run = await ok("subagents_run", {
      agent: "asker",
      prompt: "go",
      await: false,
      caps: { maxTimeMs: 60_000, maxToolCalls: 10 },
    });
    const primaries = path.join(sb.home, "primaries");
    const [primary] = fs.readdirSync(primaries);
    const metaFile = path.join(primaries, primary!, "artifacts", run.id, "meta.json");
    const meta = JSON.parse(fs.readFileSync(metaFile, "utf8"));
    expect(meta.caps).toEqual({ maxTimeMs: 60_000, maxToolCalls: 10 });
    const q = await until(
      async () =>
        (await ok("subagents_inbox", { peek: true })).requests.find((r: Data) => r.child === run.id),
      20_000,
      100,
    );
    expect(q).toMatchObject({
      type: "question",
      text: "Ship it?",
      choices: ["yes", "no"],
      lineage: [run.id],
    });
    const wrong = await call("subagents_answer", { id: q.id, text: "maybe" });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toContain("yes, no");
    expect(await ok("subagents_answer", { id: q.id.slice(-8), text: "no" })).toEqual({
      answered: q.id,
      child: run.id,
    });
    const done = await ok("subagents_await", { ids: [run.id] });
    expect(done.results[0].status).toBe("completed");
    expect((await ok("subagents_result", { id: run.id })).output.trim()).toBe("ship: no");
    expect((await ok("subagents_inbox", { peek: true })).requests).toEqual([]);
  });

  it("a blocking subagents_run reports the question as progress the moment it is asked; answering ends the wait", async () => {
    const progress: string[] = [];
    let answered: Promise<unknown> | undefined;
    const run = client.callTool(
      { name: "subagents_run", arguments: { agent: "asker", prompt: "go" } },
      undefined,
      {
        timeout: 50_000,
        onprogress: (p) => {
          progress.push(p.message ?? "");
          // The question arrives while the run call waits: answer it through a second call.
          if (!answered && p.message?.includes("asks: Ship it?"))
            answered = (async () => {
              const q = (await ok("subagents_inbox", { peek: true })).requests[0];
              return ok("subagents_answer", { id: q.id, text: "yes" });
            })();
        },
      },
    );
    const r = await run;
    const data = JSON.parse((r.content as { text: string }[])[0]!.text);
    expect(data, progress.join("\n")).toMatchObject({ status: "completed" });
    expect(data.output.trim()).toBe("ship: yes");
    expect(await answered).toMatchObject({ answered: expect.any(String) });
  });

  it("subagents_cancel {snapshot: true} keeps the child's last context before stopping it", async () => {
    const run = await ok("subagents_run", {
      agent: "mock",
      prompt: "long work\nmock: sleep=60 tools=2",
      await: false,
    });
    await until(async () => (await ok("subagents_status", { id: run.id })).status === "running");
    const r = await ok("subagents_cancel", { id: run.id, snapshot: true });
    const file = r.cancelled[0].snapshot as string;
    expect(path.basename(path.dirname(file))).toBe("snapshots");
    const snap = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(snap).toMatchObject({ v: 1, running: true });
    expect(snap.prompt).toContain("long work");
  });

  it("bad caps are refused before anything starts", async () => {
    for (const caps of [{ maxTimeMs: -1 }, { maxTurnz: 2 }, { maxTokens: "many" }]) {
      const r = await call("subagents_run", { agent: "mock", prompt: "x", caps });
      expect(r.isError, JSON.stringify(caps)).toBe(true);
      expect(r.text).not.toContain("\n");
    }
  });

  it("a live session's permission request is in subagents_inbox (type permission); subagents_answer allow_always lets it run", async () => {
    // The agent writes perm.txt in its cwd: the MCP server's (the sandbox's working dir).
    const cwd = sb.cwd;
    const agent = path.join(import.meta.dirname, "..", "fixtures", "acp-agent.mjs");
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "acp-perm.md"),
      `---\nrunner: acp\ncommand: ${JSON.stringify([process.execPath, agent])}\n---\n`,
    );
    const run = await ok("subagents_run", { agent: "acp-perm", prompt: "ask permission", await: false });
    const q = await until(
      async () =>
        (await ok("subagents_inbox", { peek: true })).requests.find((r: Data) => r.child === run.id),
      20_000,
      100,
    );
    expect(q).toMatchObject({
      type: "permission",
      tool: "execute",
      choices: ["allow", "allow_always", "deny"],
      lineage: [run.id],
    });
    expect(q.summary).toContain("perm.txt");
    expect((await call("subagents_answer", { id: q.id, text: "yes" })).isError).toBe(true);
    expect(await ok("subagents_answer", { id: q.id, text: "allow_always" })).toEqual({
      answered: q.id,
      child: run.id,
    });
    const done = await ok("subagents_await", { ids: [run.id] });
    expect(done.results[0].status).toBe("completed");
    expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8")).toBe("always");
    expect((await ok("subagents_inbox", { peek: true })).requests).toEqual([]);
    await ok("subagents_cancel", { id: run.id });
  });
});
