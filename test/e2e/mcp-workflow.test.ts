import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-mcpwf");

let client: Client;
let stderr = "";

// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Data = any;

async function call(
  args: Record<string, unknown>,
  onprogress?: (p: Progress) => void,
): Promise<{ isError: boolean; text: string; data: Data }> {
  const r = await client.callTool({ name: "subagents_workflow", arguments: args }, undefined, {
    timeout: 60_000,
    ...(onprogress ? { onprogress } : {}),
  });
  const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
  return { isError: !!r.isError, text, data: r.isError ? undefined : JSON.parse(text) };
}

const ok = async (args: Record<string, unknown>, onprogress?: (p: Progress) => void): Promise<Data> => {
  const r = await call(args, onprogress);
  if (r.isError) throw new Error(`subagents_workflow failed: ${r.text}\n${stderr}`);
  return r.data;
};

const runsDir = (): string => {
  const primaries = path.join(sb.home, "primaries");
  if (!fs.existsSync(primaries)) return "";
  for (const p of fs.readdirSync(primaries)) {
    const d = path.join(primaries, p, "workflows");
    if (fs.existsSync(d)) return d;
  }
  return "";
};
const runCount = (): number => (runsDir() ? fs.readdirSync(runsDir()).length : 0);

const step = (id: string, prompt: string, needs: string[] = []) => ({ id, agent: "mock", prompt, needs });

/** A client on a real `muster mcp` process (its stderr kept for failure messages). */
async function connect(): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: sb.env as Record<string, string>,
    cwd: sb.cwd,
    stderr: "pipe",
  });
  transport.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const c = new Client({ name: "muster-test", version: "1.0.0" });
  await c.connect(transport);
  return { client: c, pid: transport.pid! };
}

describe("subagents_workflow and workflow prompts over stdio (real server, tmux, mock agent)", () => {
  beforeAll(async () => {
    ({ client } = await connect());
  });
  afterAll(async () => {
    await client?.close();
  });

  it("tools/list has subagents_workflow, one-line description, and stays compact", async () => {
    const list = await client.listTools();
    const wf = list.tools.find((t) => t.name === "subagents_workflow");
    expect(wf).toBeDefined();
    expect(wf!.description).not.toContain("\n");
    expect(Object.keys(wf!.inputSchema.properties ?? {})).toContain("source");
    expect(JSON.stringify(list).length).toBeLessThan(6600);
  });

  it("no arguments: the workflows a name can run, with their steps", async () => {
    const r = await ok({});
    expect(r.workflows.find((w: Data) => w.name === "review-chain")).toEqual({
      name: "review-chain",
      description: "Inspect a change from two angles, then synthesize.",
      steps: [
        { id: "correctness", agent: "reviewer" },
        { id: "tests", agent: "reviewer" },
        { id: "synthesis", agent: "reviewer", needs: ["correctness", "tests"] },
      ],
    });
  });

  it("runs the bundled review-chain by name: every step in declaration order, the synthesis as result, progress per step", async () => {
    const seen: Progress[] = [];
    const r = await ok({ name: "review-chain", input: "the change under review" }, (p) => seen.push(p));
    expect(r.workflow).toBe("review-chain");
    expect(r.status).toBe("completed");
    expect(r.runId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.steps.map((s: Data) => [s.id, s.status])).toEqual([
      ["correctness", "completed"],
      ["tests", "completed"],
      ["synthesis", "completed"],
    ]);
    for (const s of r.steps) expect(s.childId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({ id: "synthesis", agent: "reviewer", status: "completed" });
    expect(r.results[0].text).toContain("Task: Synthesize the findings");
    const messages = seen.map((p) => p.message ?? "");
    for (const s of r.steps)
      expect(messages).toContain(`step ${s.id} started: child ${s.childId.slice(-8)} (reviewer)`);
    expect(messages).toContain("step correctness completed");
    expect(messages).toContain("step tests completed");
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1));
  });

  it("a transient steps list: a failed step skips its dependents with the cause; an independent branch completes", async () => {
    const r = await ok({
      steps: [
        step("broken", "Fail.\nmock: exit=3"),
        step("after", "Never runs.", ["broken"]),
        step("fine", "Runs anyway.\nmock: reply=FINE"),
      ],
      input: "x",
    });
    expect(r.workflow).toBe("transient");
    expect(r.status).toBe("failed");
    expect(r.steps.map((s: Data) => [s.id, s.status])).toEqual([
      ["broken", "errored"],
      ["after", "skipped"],
      ["fine", "completed"],
    ]);
    expect(r.steps[1]).toMatchObject({ cause: { stepId: "broken", status: "errored" } });
    expect(r.steps[1].reason).toMatch(/needs "broken", which errored/);
    expect(r.steps[1].childId).toBeUndefined();
    expect(r.results.map((s: Data) => [s.id, s.text])).toEqual([
      ["after", undefined],
      ["fine", "FINE"],
    ]);
  });

  it("keep: true leaves the steps' children idle; without it they are closed once their step settles", async () => {
    const statuses = async (r: Data) =>
      Promise.all(r.steps.map(async (s: Data) => (await sb.json(["status", s.childId])).data.status));
    const closed = await ok({ steps: [step("one", "x")], input: "" });
    expect(await statuses(closed)).toEqual(["closed"]);
    const kept = await ok({ steps: [step("one", "x")], input: "", keep: true });
    expect(await statuses(kept)).toEqual(["idle"]);
    await sb.run(["cancel", kept.steps[0].childId]);
  });

  it("a bad definition is a one-line error and starts nothing: a cycle (named), an unknown agent, a bad argument mix", async () => {
    const before = runCount();
    const cycle = await call({
      steps: [step("a", "A", ["b"]), step("b", "B", ["a"])],
    });
    expect(cycle.isError).toBe(true);
    expect(cycle.text).toMatch(/^invalid_config: .*steps form a cycle: a → b → a$/);
    const agent = await call({ steps: [{ id: "a", agent: "nobody", prompt: "A" }] });
    expect(agent.isError).toBe(true);
    expect(agent.text).toMatch(/unknown agent: step "a" uses "nobody"; the subagents_agents tool lists them/);
    const both = await call({ name: "review-chain", steps: [step("a", "A")] });
    expect(both.text).toMatch(/^invalid_argument: give exactly one of name, steps, source or runId \(/);
    const inputOnly = await call({ input: "x" });
    expect(inputOnly.text).toMatch(/^invalid_argument: give exactly one of name, steps, source or runId/);
    const file = await call({ name: "../x.toml" });
    expect(file.text).toMatch(/^invalid_argument: .*must be a workflow name, not a file$/);
    const unknown = await call({ name: "no-such-flow" });
    expect(unknown.text).toMatch(/^not_found: unknown workflow "no-such-flow"; available: .*review-chain/);
    const extra = await call({ name: "review-chain", sources: "ctx.agent()" });
    expect(extra.text).toMatch(/unknown argument "sources"/);
    const mixed = await call({ name: "review-chain", source: "return 1;" });
    expect(mixed.text).toMatch(/^invalid_argument: give exactly one of name, steps, source or runId/);
    const blank = await call({ source: "  \n" });
    expect(blank.text).toBe("invalid_argument: source is empty: give the program's text");
    for (const t of [cycle, agent, both, inputOnly, file, unknown, extra, mixed, blank])
      expect(t.text).not.toContain("\n");
    expect(runCount()).toBe(before);
    const ls = (await client.callTool({ name: "subagents_status", arguments: {} })).content as {
      text: string;
    }[];
    const children = JSON.parse(ls[0]!.text).children as { agent: string }[];
    expect(children.some((c) => c.agent === "nobody")).toBe(false);
  });

  it("await false returns the run id at once; {runId} then awaits and returns the results", async () => {
    const started = await ok({
      steps: [
        step("slow", "Slow.\nmock: sleep=2 reply=SLOW"),
        step("next", "Next.\nmock: reply=NEXT", ["slow"]),
      ],
      await: false,
    });
    expect(started).toMatchObject({ workflow: "transient", status: "running" });
    expect(started.steps).toBeUndefined();
    // Not settled yet: await false on the run reads where it stands.
    const now = await ok({ runId: started.runId, await: false });
    expect(now).toMatchObject({ runId: started.runId, status: "running" });
    const seen: Progress[] = [];
    const done = await ok({ runId: started.runId.slice(-8) }, (p) => seen.push(p));
    expect(done.runId).toBe(started.runId);
    expect(done.status).toBe("completed");
    expect(done.steps.map((s: Data) => s.id)).toEqual(["slow", "next"]);
    expect(done.results).toEqual([expect.objectContaining({ id: "next", text: "NEXT" })]);
    expect(seen[0]?.message).toBe(`waiting for workflow run ${started.runId.slice(-8)}`);
    // Once settled, asking again answers at once with the same results.
    const again = await ok({ runId: started.runId });
    expect(again).toEqual(done);
    const bad = await call({ runId: "ffffffff" });
    expect(bad.text).toBe(
      "not_found: no workflow run ffffffff in this primary; the muster CLI's workflow runs lists them",
    );
  });

  it("source: a model-written program fans out two mock children in the sandbox and returns their texts", async () => {
    const seen: Progress[] = [];
    const source = [
      'const hs = ["LEFT", "RIGHT"].map((w) => ctx.agent({ agent: "mock", prompt: "Side.\\nmock: reply=" + w + "-" + input }));',
      'ctx.log("fanned out " + hs.length);',
      "const rs = await ctx.await(hs, 'all');",
      "return rs.map((r) => r.text);",
    ].join("\n");
    const r = await ok({ source, input: "pie" }, (p) => seen.push(p));
    expect(r.workflow).toBe("sandbox");
    expect(r.status).toBe("completed");
    expect(r.result).toEqual(["LEFT-pie", "RIGHT-pie"]);
    expect(r.steps.map((s: Data) => [s.id, s.agent, s.status])).toEqual([
      ["agent-1", "mock", "completed"],
      ["agent-2", "mock", "completed"],
    ]);
    for (const s of r.steps) expect(s.childId).toMatch(/^[0-9a-f-]{36}$/);
    const messages = seen.map((p) => p.message ?? "");
    expect(messages[0]).toBe(`workflow run ${r.runId.slice(-8)} started`);
    for (const s of r.steps)
      expect(messages).toContain(`step ${s.id} started: child ${s.childId.slice(-8)} (mock)`);
    expect(messages).toContain("step agent-1 completed");
    // (the last notifications may trail the answer: only those sent before the children settled are asserted)
    expect(messages).toContain("log: fanned out 2");
    // A durable run like the others: its record lists both children.
    const view = (await sb.json(["workflow", "status", r.runId])).data;
    expect(view.status).toBe("completed");
    // (the record lists a program's steps as they started: two at once may come in either order)
    expect(view.steps.map((s: Data) => [s.id, s.status]).sort()).toEqual([
      ["agent-1", "completed"],
      ["agent-2", "completed"],
    ]);
    // await false: the run id at once, then {runId} awaits the program's answer.
    const started = await ok({
      source:
        'return (await ctx.agent({ agent: "mock", prompt: "x\\nmock: sleep=1 reply=LATE" }).await()).text;',
      await: false,
    });
    expect(started).toMatchObject({ workflow: "sandbox", status: "running" });
    const done = await ok({ runId: started.runId });
    expect(done).toMatchObject({ runId: started.runId, status: "completed", result: "LATE" });
  });

  it("source: an escape attempt fails the run with a clear error and starts no child", async () => {
    const before = (await client.callTool({ name: "subagents_status", arguments: {} })).content as {
      text: string;
    }[];
    const count = JSON.parse(before[0]!.text).children.length;
    const r = await ok({
      source:
        'const p = ctx.constructor.constructor("return process")(); ctx.agent({ agent: "mock", prompt: String(p.pid) });',
    });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/^the program threw ReferenceError: .*process/);
    expect(r.steps).toEqual([]);
    const loop = await ok({ source: "for (;;) {}" });
    expect(loop.status).toBe("failed");
    expect(loop.error).toMatch(/without awaiting \(CPU budget exceeded\)/);
    const after = (await client.callTool({ name: "subagents_status", arguments: {} })).content as {
      text: string;
    }[];
    expect(JSON.parse(after[0]!.text).children.length).toBe(count);
  });

  it("prompts/list offers every workflow as workflow:<name>; prompts/get asks for the subagents_workflow tool", async () => {
    const list = await client.listPrompts();
    const rc = list.prompts.find((p) => p.name === "workflow:review-chain");
    expect(rc).toMatchObject({
      description: "Inspect a change from two angles, then synthesize",
      arguments: [expect.objectContaining({ name: "input", required: false })],
    });
    expect(list.prompts.map((p) => p.name)).toContain("workflow:scout-then-plan");
    const got = await client.getPrompt({
      name: "workflow:review-chain",
      arguments: { input: 'the diff of HEAD~1, "quoted"' },
    });
    expect(got.messages).toHaveLength(1);
    expect(got.messages[0]!.role).toBe("user");
    const text = (got.messages[0]!.content as { type: string; text: string }).text;
    expect(text).toContain("the subagents_workflow tool");
    expect(text).toContain(JSON.stringify({ name: "review-chain", input: 'the diff of HEAD~1, "quoted"' }));
    const bare = await client.getPrompt({ name: "workflow:review-chain" });
    expect((bare.messages[0]!.content as { text: string }).text).toMatch(/input from this conversation/);
    await expect(client.getPrompt({ name: "workflow:no-such-flow" })).rejects.toThrow(/unknown workflow/);
    await expect(client.getPrompt({ name: "other" })).rejects.toThrow(/unknown prompt/);
  });

  it("cancelling a waiting call cancels its run: the running step's child is cancelled, its dependent skipped", async () => {
    const controller = new AbortController();
    const seen: Progress[] = [];
    const doomed = client
      .callTool(
        {
          name: "subagents_workflow",
          arguments: { steps: [step("hangs", "Hang.\nmock: hang"), step("after", "After.", ["hangs"])] },
        },
        undefined,
        { timeout: 60_000, signal: controller.signal, onprogress: (p) => seen.push(p) },
      )
      .catch((e: Error) => e);
    await until(() => seen.some((p) => /^step hangs started/.test(p.message ?? "")), 20_000);
    const short = /^workflow run ([0-9a-f]{8}) started$/.exec(seen[0]?.message ?? "")?.[1];
    expect(short).toBeDefined();
    controller.abort();
    expect(await doomed).toBeInstanceOf(Error);
    const r = await ok({ runId: short });
    expect(r.status).toBe("cancelled");
    expect(r.steps.map((s: Data) => [s.id, s.status])).toEqual([
      ["hangs", "cancelled"],
      ["after", "skipped"],
    ]);
  });

  it("cancelling a waiting source call cancels the program's run and its running child", async () => {
    const controller = new AbortController();
    const seen: Progress[] = [];
    const doomed = client
      .callTool(
        {
          name: "subagents_workflow",
          arguments: {
            source:
              'return (await ctx.agent({ agent: "mock", prompt: "Hang.\\nmock: hang" }).await()).status;',
          },
        },
        undefined,
        { timeout: 60_000, signal: controller.signal, onprogress: (p) => seen.push(p) },
      )
      .catch((e: Error) => e);
    await until(() => seen.some((p) => /^step agent-1 started/.test(p.message ?? "")), 20_000);
    const short = /^workflow run ([0-9a-f]{8}) started$/.exec(seen[0]?.message ?? "")?.[1];
    expect(short).toBeDefined();
    controller.abort();
    expect(await doomed).toBeInstanceOf(Error);
    const r = await until(async () => {
      const x = await ok({ runId: short, await: false });
      return x.status === "cancelled" ? x : undefined;
    }, 20_000);
    expect(r.steps).toEqual([expect.objectContaining({ id: "agent-1", status: "cancelled" })]);
  });

  it("a run started with await false outlives the connection: the server finishes it once stdin ends, then exits", async () => {
    // A raw stdio client: the SDK's close() kills the server two seconds after ending its stdin.
    const server = spawn(process.execPath, [BIN, "mcp"], { cwd: sb.cwd, env: sb.env, stdio: "pipe" });
    const exited = new Promise<number | null>((resolve) => server.once("exit", (code) => resolve(code)));
    let out = "";
    server.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const send = (msg: Record<string, unknown>) =>
      server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
    const answer = (id: number) =>
      until(
        () =>
          out
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
            .find((m) => m.id === id),
        20_000,
      );
    send({
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    expect((await answer(1)).result.capabilities).toMatchObject({ tools: {}, prompts: {} });
    send({ method: "notifications/initialized" });
    send({
      id: 2,
      method: "tools/call",
      params: {
        name: "subagents_workflow",
        arguments: { steps: [step("slow", "Slow.\nmock: sleep=2 reply=LATE")], await: false },
      },
    });
    const { runId } = JSON.parse((await answer(2)).result.content[0].text);
    server.stdin.end();
    expect(await exited).toBe(0);
    // The server exited only after the run settled: its record says so.
    const view = (await sb.json(["workflow", "status", runId])).data;
    expect(view.status).toBe("completed");
    expect(view.steps).toEqual([expect.objectContaining({ id: "slow", status: "completed" })]);
  });
});
