import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeControl } from "../../src/artifacts/control.js";
import { BIN, readEvents, until, useSandbox } from "../helpers/cli.js";
import { StdinOnlyTransport } from "../helpers/mcp.js";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string | undefined) => /prompt-sha256: ([0-9a-f]{64})/.exec(text ?? "")?.[1];

const sb = useSandbox("mt-mcp");
// A project profile: the tool list must name it too.
fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
fs.writeFileSync(
  path.join(sb.cwd, ".muster", "agents", "scout.md"),
  "---\ndescription: Project scout for the MCP test. A second sentence that is left out.\nrunner: mock\n---\nScout.\n",
);

/** A client on a real `muster mcp` process; its stderr is kept for failure messages. */
async function connect(): Promise<{ client: Client; stderr: () => string; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: sb.env as Record<string, string>,
    cwd: sb.cwd,
    stderr: "pipe",
  });
  let err = "";
  transport.stderr?.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const client = new Client({ name: "muster-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, stderr: () => err, pid: transport.pid! };
}

let client: Client;
let serverStderr: () => string;

// biome-ignore lint/suspicious/noExplicitAny: tool results are read loosely
type Data = any;
interface Called {
  isError: boolean;
  text: string;
  data: Data;
}

/** Calls a tool; `data` is the parsed JSON answer (undefined for an error). */
async function call(
  name: string,
  args: Record<string, unknown>,
  opts: { onprogress?: (p: Progress) => void; signal?: AbortSignal } = {},
): Promise<Called> {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 50_000, ...opts });
  const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
  return { isError: !!r.isError, text, data: r.isError ? undefined : JSON.parse(text) };
}

const ok = async (name: string, args: Record<string, unknown>): Promise<Data> => {
  const r = await call(name, args);
  if (r.isError) throw new Error(`${name} failed: ${r.text}\n${serverStderr()}`);
  return r.data;
};

const fails = async (name: string, args: Record<string, unknown>, pattern: RegExp): Promise<void> => {
  const r = await call(name, args);
  expect(r.isError, `${name} ${JSON.stringify(args)} → ${r.text}`).toBe(true);
  expect(r.text).toMatch(pattern);
  expect(r.text).not.toContain("\n");
  expect(r.text, "an MCP error names tool calls, not CLI commands").not.toMatch(
    /\bmuster (spawn|send|wait|ls|agents|gc|cancel)\b/,
  );
  // Clients spell tool names their own way (mcp__muster__subagents_run, muster_subagents_run, …):
  // a hint says "the subagents_run tool", never a bare name the client does not use.
  expect(r.text.replace(/\bthe subagents_[a-z]+ tool\b/g, ""), "tool named as such").not.toMatch(
    /subagents_/,
  );
};

describe("muster mcp over stdio (real server, tmux and mock runner)", () => {
  beforeAll(async () => {
    ({ client, stderr: serverStderr } = await connect());
  });
  afterAll(async () => {
    await client?.close(); // the server exits when its stdin closes
  });

  it("lists the tools compactly, with the profiles in the agent parameter", async () => {
    const list = await client.listTools();
    expect(list.tools.map((t) => t.name)).toEqual([
      "subagents_run",
      "subagents_await",
      "subagents_status",
      "subagents_result",
      "subagents_send",
      "subagents_cancel",
      "subagents_inbox",
      "subagents_answer",
      "subagents_models",
      "subagents_workflow",
      "subagents_compare",
      "subagents_agents",
    ]);
    const size = JSON.stringify(list).length;
    console.log(`tools/list answer: ${size} characters`);
    // The list rides in the client model's context on every request: a budget, raised only for start options
    // every front end has (verify, restart, best-of, compare, the tree's pause), each in a few words.
    expect(size).toBeLessThan(6600);
    const agent = (list.tools[0]!.inputSchema.properties as Record<string, { description: string }>).agent!;
    for (const name of ["mock", "explorer", "reviewer", "worker", "scout"])
      expect(agent.description).toContain(`${name}:`);
    expect(agent.description).toContain("scout: Project scout for the MCP test\n");
  });

  it("subagents_run {verify}: an answer whose check fails is failed_verification, with the check's output", async () => {
    const r = await ok("subagents_run", {
      agent: "mock",
      prompt: "checked",
      verify: { command: "echo 'lint: 2 problems'; exit 4", retries: 0 },
    });
    expect(r).toMatchObject({ status: "failed_verification", verified: { exitCode: 4, attempts: 1 } });
    expect(r.verified.outputTail).toContain("lint: 2 problems");
    expect(r.error).toContain("exited 4");
    const passed = await ok("subagents_run", { agent: "mock", prompt: "checked", verify: "true" });
    expect(passed).toMatchObject({ status: "completed", verified: { exitCode: 0 } });
    await fails("subagents_run", { agent: "mock", prompt: "x", verify: 7 }, /verify is a command line/);
    await fails(
      "subagents_run",
      { id: passed.id, prompt: "x", verify: "true" },
      /verify is set when a child starts/,
    );
  });

  it("subagents_run {restart}: the child's restart policy, checked like the flag", async () => {
    const r = await ok("subagents_run", { agent: "mock", prompt: "self-healing", restart: "on-lost:2" });
    const dir = path.join(sb.home, "primaries");
    const metaFile = fs
      .readdirSync(dir)
      .map((p) => path.join(dir, p, "artifacts", r.id, "meta.json"))
      .find((f) => fs.existsSync(f))!;
    expect(JSON.parse(fs.readFileSync(metaFile, "utf8")).restart).toEqual({ onLost: 2 });
    await fails("subagents_run", { agent: "mock", prompt: "x", restart: "sometimes" }, /on-lost/);
    await fails(
      "subagents_run",
      { id: r.id, prompt: "x", restart: "on-lost" },
      /restart policy is set when a child starts/,
    );
  });

  it("subagents_run waits for the settled turn and returns its output", async () => {
    const prompt = "Summarise the repo\nmock: tools=1";
    const r = await ok("subagents_run", { agent: "mock", prompt });
    expect(r).toMatchObject({ agent: "mock", status: "completed", resumable: true });
    expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(shaIn(r.output)).toBe(sha(prompt));
    expect(r.usage.output).toBeGreaterThan(0);
    expect(r.error).toBeUndefined();

    // Resume the same child through subagents_run {id}: its conversation continues.
    const next = "And now the tests";
    const again = await ok("subagents_run", { id: r.id.slice(-8), prompt: next });
    expect(again).toMatchObject({ id: r.id, status: "completed" });
    expect(shaIn(again.output)).toBe(sha(next));
    expect(again.output).toContain("history-turns: 1");

    // result: the latest turn, or a named one; status: the child in detail.
    expect((await ok("subagents_result", { id: r.id })).output).toBe(again.output);
    expect((await ok("subagents_result", { id: r.id, turnId: r.turnId })).output).toBe(r.output);
    const detail = await ok("subagents_status", { id: r.id });
    expect(detail).toMatchObject({ id: r.id, status: "idle", lastOutcome: "completed", resumable: true });
    expect(detail.turnList.map((t: { status: string }) => t.status)).toEqual(["completed", "completed"]);
    const list = await ok("subagents_status", {});
    expect(list.children.map((c: { id: string }) => c.id)).toContain(r.id);
    expect(list.total).toBe(list.children.length);
  });

  it("subagents_run {backend} starts the child in that backend, {tui} asks for the CLI's TUI; bad combinations are refused", async () => {
    const r = await ok("subagents_run", { agent: "mock", prompt: "in a pty", backend: "pty" });
    expect(r).toMatchObject({ status: "completed" });
    const st = await sb.json(["status", r.id]);
    expect(st.data.backend, JSON.stringify(st.data)).toBe("pty");
    await fails("subagents_run", { agent: "mock", prompt: "x", backend: "nowhere" }, /nowhere/);
    await fails(
      "subagents_run",
      { id: r.id, prompt: "x", backend: "tmux" },
      /continues a child where it ran/,
    );
    await fails("subagents_run", { id: r.id, prompt: "x", tui: true }, /mode it ran in/);
    // tui reaches the spawn: the mock runner has no TUI, and says which runners do.
    await fails("subagents_run", { agent: "mock", prompt: "x", tui: true }, /no TUI mode .*claude/);
    await ok("subagents_cancel", { id: r.id });
  });

  it("subagents_run {fork} starts a new child from another's conversation (its agent by default)", async () => {
    const a = await ok("subagents_run", { agent: "mock", prompt: "first line of work\nmock: reply=WORK-A" });
    const f = await ok("subagents_run", { fork: a.id.slice(-8), prompt: "the other way" });
    expect(f).toMatchObject({ agent: "mock", status: "completed" });
    expect(f.id).not.toBe(a.id);
    const st = await sb.json(["status", f.id]);
    expect(st.data.forkedFrom).toBe(a.id);
    const dir = path.join(st.data.artifactDir, "prompts");
    const carried = fs.readdirSync(dir).find((n) => n.endsWith(".runner.txt"));
    expect(fs.readFileSync(path.join(dir, carried!), "utf8")).toContain("Assistant:\nWORK-A");
    await fails("subagents_run", { id: a.id, fork: a.id, prompt: "x" }, /fork starts a new child/);
    await ok("subagents_cancel", { ids: [a.id, f.id] });
  });

  it("await false returns at once; subagents_await first lists the pending ids, all waits for both", async () => {
    const fast = await ok("subagents_run", { agent: "mock", prompt: "fast", await: false });
    const slow = await ok("subagents_run", { agent: "mock", prompt: "slow\nmock: sleep=3", await: false });
    // The status subagents_status derives at that moment: the host has hardly had time to start.
    expect(fast).toEqual({
      id: expect.any(String),
      status: expect.stringMatching(/^(starting|queued|running)$/),
    });
    const first = await ok("subagents_await", { ids: [slow.id, fast.id], mode: "first" });
    expect(first.results.map((r: { id: string }) => r.id)).toEqual([fast.id]);
    expect(first.results[0].status).toBe("completed");
    expect(first.pending).toEqual([slow.id]);
    const all = await ok("subagents_await", { ids: [fast.id, slow.id], mode: "all", timeoutMs: 30_000 });
    expect(all.results.map((r: { status: string }) => r.status)).toEqual(["completed", "completed"]);
    expect(all.pending).toEqual([]);
    expect(shaIn(all.results.find((r: { id: string }) => r.id === slow.id).output)).toBe(
      sha("slow\nmock: sleep=3"),
    );
  });

  it("subagents_inbox hands each undelivered completion over once; peek leaves it", async () => {
    await ok("subagents_inbox", {}); // whatever earlier tests left undelivered
    const child = await ok("subagents_run", { agent: "mock", prompt: "inbox me", await: false });
    await until(async () => (await ok("subagents_inbox", { peek: true })).records.length > 0, 20_000);
    const peeked = await ok("subagents_inbox", { peek: true });
    expect(peeked.records.map((r: { id: string }) => r.id)).toEqual([child.id]);
    expect(peeked.records[0]).toMatchObject({ status: "completed", agent: "mock" });
    const taken = await ok("subagents_inbox", {});
    expect(taken.records.map((r: { id: string }) => r.id)).toEqual([child.id]);
    expect((await ok("subagents_inbox", {})).records).toEqual([]);
    await fails("subagents_inbox", { peek: "yes" }, /peek/);
  });

  it("a batch of 6 concurrent runs under the bound of 4, plus an unknown agent that fails alone", async () => {
    const prompts = [1, 2, 3, 4, 5, 6].map((i) => `batch ${i}\nmock: sleep=1`);
    const calls = [
      ...prompts.map((prompt) => call("subagents_run", { agent: "mock", prompt })),
      call("subagents_run", { agent: "no-such-agent", prompt: "x" }),
    ];
    const out = await Promise.all(calls);
    const bad = out[6]!;
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/unknown agent "no-such-agent"/);
    const good = out.slice(0, 6);
    for (const [i, r] of good.entries()) {
      expect(r.isError, r.text).toBe(false);
      expect(r.data.status).toBe("completed");
      expect(shaIn(r.data.output)).toBe(sha(prompts[i]!));
    }
    // Nothing in the MCP layer serialises them (they overlap), and the primary's bound holds (≤ 4 at once).
    const spans = [];
    for (const r of good) {
      const dir = (await ok("subagents_status", { id: r.data.id })).artifactDir as string;
      const ev = readEvents(dir);
      const start = Date.parse(ev.find((e) => e.type === "turn_started")!.ts);
      const end = Date.parse(ev.find((e) => e.type === "completion")!.ts);
      spans.push([start, end] as const);
    }
    const overlapping = Math.max(...spans.map(([s]) => spans.filter(([a, b]) => a <= s && s < b).length));
    expect(overlapping).toBeGreaterThanOrEqual(2);
    expect(overlapping).toBeLessThanOrEqual(4);
  });

  it("a group: members join with groupId, subagents_await {groupId} seals it and returns every member", async () => {
    const a = await ok("subagents_run", {
      agent: "mock",
      prompt: "member a",
      await: false,
      groupId: "mcp-g",
    });
    const b = await ok("subagents_run", {
      agent: "mock",
      prompt: "member b\nmock: sleep=1",
      await: false,
      groupId: "mcp-g",
    });
    const all = await ok("subagents_await", { groupId: "mcp-g", mode: "all" });
    expect(all.results.map((r: { id: string }) => r.id).sort()).toEqual([a.id, b.id].sort());
    await fails("subagents_run", { agent: "mock", prompt: "late", groupId: "mcp-g" }, /sealed/);
    await fails("subagents_run", { id: a.id, prompt: "x", groupId: "mcp-g" }, /groupId is for new children/);
  });

  it("a refused group await (mode first) leaves the group open: the refusal seals nothing", async () => {
    const a = await ok("subagents_run", { agent: "mock", prompt: "h1", await: false, groupId: "mcp-h" });
    await fails("subagents_await", { groupId: "mcp-h", mode: "first" }, /whole/);
    const b = await ok("subagents_run", { agent: "mock", prompt: "h2", await: false, groupId: "mcp-h" });
    const all = await ok("subagents_await", { groupId: "mcp-h" });
    expect(all.results.map((r: { id: string }) => r.id).sort()).toEqual([a.id, b.id].sort());
  });

  it("sends progress notifications while a run waits, when the client gives a progress token", async () => {
    const seen: Progress[] = [];
    const r = await call(
      "subagents_run",
      { agent: "mock", prompt: "with progress\nmock: sleep=2 tools=3" },
      { onprogress: (p) => seen.push(p) },
    );
    expect(r.data.status).toBe("completed");
    const short = (r.data.id as string).slice(-8);
    expect(seen.length).toBeGreaterThanOrEqual(4);
    expect(seen.map((p) => p.progress)).toEqual(seen.map((_, i) => i + 1));
    for (const p of seen) expect(p.message).toContain(short);
    expect(seen.some((p) => /running · ⚙ /.test(p.message ?? ""))).toBe(true);
    // (The closing "completed" notification may be dropped by the client: the SDK forgets a request's progress
    // handler on its answer, before it dispatches a notification that arrived in the same read.)
  });

  it("cancelling one run request cancels exactly its child; a sibling run completes", async () => {
    const controller = new AbortController();
    const seen: Progress[] = [];
    const doomed = call(
      "subagents_run",
      { agent: "mock", prompt: "doomed\nmock: sleep=30" },
      {
        signal: controller.signal,
        onprogress: (p) => {
          seen.push(p);
          if (/running/.test(p.message ?? "")) controller.abort();
        },
      },
    );
    const sibling = call("subagents_run", { agent: "mock", prompt: "sibling\nmock: sleep=2" });
    await expect(doomed).rejects.toThrow();
    const short = /^([0-9a-f]{8}) /.exec(seen[0]!.message!)![1]!;
    const settled = await until(async () => {
      const d = await ok("subagents_status", { id: short });
      // The host records the cancelled completion, then closes (child_exited): wait for both.
      return d.status === "closed" ? d : undefined;
    }, 15_000);
    // Closed: its pane is gone, so there is nothing to attach to.
    expect(settled).toMatchObject({ status: "closed", lastOutcome: "cancelled", attach: null });
    const s = await sibling;
    expect(s.isError, s.text).toBe(false);
    expect(s.data.status).toBe("completed");
    expect((await ok("subagents_status", { id: s.data.id })).status).toBe("idle");
  });

  it("cancelling a subagents_await request ends the wait only; the child keeps running", async () => {
    // The turn ends only when the gate opens, once the cancelled wait is gone.
    const gate = path.join(sb.cwd, "gate-cancelled-await");
    const child = await ok("subagents_run", {
      agent: "mock",
      prompt: `waited on\nmock: gate=${encodeURIComponent(gate)}`,
      await: false,
    });
    // Running first: the wait's first notification may be the host's own start, before its turn began, and
    // "still running after the cancel" says something only of a child that was running before it.
    await until(async () => (await ok("subagents_status", { id: child.id })).status === "running");
    const control = path.join((await ok("subagents_status", { id: child.id })).artifactDir, "control");
    const controller = new AbortController();
    let notified = false;
    const waiting = call(
      "subagents_await",
      { ids: [child.id], mode: "all" },
      {
        signal: controller.signal,
        onprogress: () => {
          notified = true;
        },
      },
    );
    // Cancelled only once it waits: a progress notification (from an event after the call began) says so.
    await until(
      () => {
        if (!notified) writeControl(control, { kind: "progress", text: "ping" });
        return notified;
      },
      30_000,
      200,
    );
    controller.abort();
    await expect(waiting).rejects.toThrow();
    expect((await ok("subagents_status", { id: child.id })).status).toBe("running");
    fs.writeFileSync(gate, "go");
    const done = await ok("subagents_await", { ids: [child.id], mode: "all" });
    expect(done.results[0].status).toBe("completed");
  });

  it("subagents_send mode now interrupts the running turn; mode stop ends one and queues nothing", async () => {
    const child = await ok("subagents_run", { agent: "mock", prompt: "long\nmock: hang", await: false });
    await until(async () => (await ok("subagents_status", { id: child.id })).status === "running");
    const steered = await ok("subagents_send", { id: child.id, prompt: "instead", mode: "now" });
    expect(steered.id).toBe(child.id);
    expect(typeof steered.interrupts).toBe("string");
    const done = await ok("subagents_await", { ids: [child.id], mode: "all" });
    expect(done.results[0]).toMatchObject({ turnId: steered.turnId, status: "completed" });
    expect((await ok("subagents_result", { id: child.id, turnId: steered.interrupts })).status).toBe(
      "interrupted",
    );
    await ok("subagents_send", { id: child.id, prompt: "long again\nmock: hang" });
    await until(async () => (await ok("subagents_status", { id: child.id })).status === "running");
    const stopped = await ok("subagents_send", { id: child.id, mode: "stop" });
    expect(stopped).toMatchObject({ id: child.id, mode: "stop" });
    expect(typeof stopped.turnId).toBe("string");
    await fails("subagents_send", { id: child.id, mode: "stop", prompt: "x" }, /give no prompt/);
    await fails("subagents_send", { id: child.id }, /prompt is required/);
    await ok("subagents_cancel", { id: child.id });
  });

  it("send, cancel, models and agents work; each reports a bad call as a one-line error", async () => {
    const child = await ok("subagents_run", { agent: "mock", prompt: "first\nmock: sleep=1", await: false });
    const sent = await ok("subagents_send", { id: child.id, prompt: "follow-up" });
    expect(sent).toMatchObject({ id: child.id, queued: true });
    const done = await ok("subagents_await", { ids: [child.id], mode: "all" });
    expect(done.results[0].turnId).toBe(sent.turnId);
    expect(shaIn(done.results[0].output)).toBe(sha("follow-up"));

    const cancelled = await ok("subagents_cancel", { id: child.id });
    expect(cancelled.cancelled).toEqual([{ id: child.id, status: "closed", turnCancelled: false }]);
    await fails("subagents_send", { id: child.id, prompt: "too late" }, /^not_running: .*exited/);
    // A closed child that completed a turn resumes in a new pane.
    const resumed = await ok("subagents_run", { id: child.id, prompt: "back again" });
    expect(resumed).toMatchObject({ id: child.id, status: "completed" });
    expect((await ok("subagents_cancel", { ids: [child.id] })).cancelled[0].status).toBe("closed");

    expect((await ok("subagents_models", {})).kind).toBe("defaults");
    const search = await ok("subagents_models", { query: "mock", limit: 2 });
    expect(search).toMatchObject({ kind: "search", total: 3 });
    expect(search.matches).toHaveLength(2);
    expect((await ok("subagents_models", { model: "mock:deep" })).kind).toBe("model");
    const agents = await ok("subagents_agents", {});
    expect(agents.agents.map((a: { name: string }) => a.name)).toEqual(
      expect.arrayContaining(["mock", "scout", "worker"]),
    );
    // A parent learns which agents cannot start here (their CLI is missing) before it tries.
    const byName = (n: string) => agents.agents.find((a: { name: string }) => a.name === n);
    expect(byName("claude")).toMatchObject({ ready: false, notReady: "claude is not on PATH" });
    expect(byName("mock").ready).toBeUndefined();

    await fails(
      "subagents_run",
      { agent: "mock", id: child.id, prompt: "both" },
      /agent .* or id .*not both/,
    );
    await fails("subagents_run", { agent: "mock", prompt: "" }, /prompt is empty/);
    await fails(
      "subagents_run",
      { agent: "mock", prompt: "  \n " },
      /^invalid_argument: the prompt is empty/,
    );
    await fails("subagents_run", { agent: "mock" }, /missing argument "prompt"/);
    // Next steps are spelled as tool calls here, never as CLI commands.
    await fails(
      "subagents_run",
      { id: "ffffffff", prompt: "who?" },
      /^not_found: unknown child id .*subagents_status/,
    );
    await fails(
      "subagents_send",
      { id: child.id, prompt: "closed" },
      /has exited; continue it with the subagents_run tool: \{"id"/,
    );
    await fails(
      "subagents_run",
      { agent: "nosuch", prompt: "x" },
      /unknown agent "nosuch".*the subagents_agents tool lists them$/,
    );
    await fails("subagents_await", { ids: ["ffffffff"], mode: "all" }, /^not_found/);
    await fails("subagents_await", { ids: [child.id], mode: "some" }, /mode must be one of first, all/);
    await fails("subagents_status", { id: "ffffffff" }, /^not_found/);
    await fails("subagents_result", { id: child.id, turnId: "nope" }, /^not_found: .*no settled turn nope/);
    await fails("subagents_send", { id: "ffffffff", prompt: "x" }, /^not_found/);
    await fails("subagents_cancel", { id: child.id, ids: [child.id] }, /exactly one of id or ids/);
    await fails("subagents_cancel", { ids: [child.id, "ffffffff"] }, /^not_found/);
    await fails("subagents_models", { limit: 0 }, /limit must be >= 1/);
    await fails("subagents_agents", { verbose: true }, /unknown argument "verbose"/);
    await expect(client.callTool({ name: "subagents_nope", arguments: {} })).rejects.toThrow(/unknown tool/);
    // The server is still serving after all of that.
    expect((await client.listTools()).tools).toHaveLength(12);
  });

  it("closing the connection ends the server; children it was waiting for keep running", async () => {
    // Only stdin ends: nothing signals the server, so its exit shows it left on stdin EOF.
    const transport = new StdinOnlyTransport(sb);
    const other = new Client({ name: "muster-test", version: "1.0.0" });
    await other.connect(transport);
    const before = new Set((await ok("subagents_status", {})).children.map((c: { id: string }) => c.id));
    const pending = other
      .callTool({ name: "subagents_run", arguments: { agent: "mock", prompt: "outlive\nmock: sleep=3" } })
      .catch(() => undefined);
    const child = await until(async () => {
      const list = await ok("subagents_status", {});
      return list.children.find(
        (c: { id: string; status: string }) => c.status === "running" && !before.has(c.id),
      );
    });
    await other.close();
    await pending;
    expect(await transport.exited, transport.stderr).toEqual({ code: 0, signal: null });
    expect(fs.existsSync(`/proc/${transport.pid}`)).toBe(false);
    const d = await ok("subagents_await", { ids: [child.id], mode: "all", timeoutMs: 20_000 });
    expect(d.results[0].status).toBe("completed");
  });
});
