// Codex app-server as a session driver, driven with the messages the pinned codex 0.171 sends (recorded against
// the scripted endpoint): its messages carry no `jsonrpc` member, a resumed thread replays its last turn's
// usage before the new turn starts, and approvals are server → client requests.
import { describe, expect, it } from "vitest";
import { codexAppDriver, codexAppTurnReader } from "../../src/runners/codex/app-server.js";
import type { AgentMessage, SessionSpec } from "../../src/runners/types.js";

const THREAD = "01a22e6f-a0f5-7361-952b-a773a5070f81";
const OLD_TURN = "01a22e6f-a116-7ca1-aceb-19d751412af5";
const TURN = "01a22e6f-a522-7032-8d67-a23435ea2599";

const usage = (turnId: string, input: number, output: number) => ({
  method: "thread/tokenUsage/updated",
  params: {
    threadId: THREAD,
    turnId,
    tokenUsage: {
      total: { inputTokens: 99, outputTokens: 99 },
      last: { inputTokens: input, outputTokens: output },
    },
  },
});

describe("codexAppTurnReader", () => {
  it("streams deltas once, answers with the last message, sums each call's usage", () => {
    const r = codexAppTurnReader();
    const out: AgentMessage[] = [];
    const note = (method: string, params: Record<string, unknown>) =>
      out.push(...r.notification(method, params));
    note("item/agentMessage/delta", { itemId: "msg_1", delta: "scripted " });
    note("item/agentMessage/delta", { itemId: "msg_1", delta: "answer" });
    note("item/completed", { item: { type: "agentMessage", id: "msg_1", text: "scripted answer" } });
    note("thread/tokenUsage/updated", usage(TURN, 12, 7).params);
    note("thread/tokenUsage/updated", usage(TURN, 24, 7).params);
    out.push(...r.end({ id: TURN, status: "completed" }));
    expect(out).toEqual([
      { type: "text", text: "scripted " },
      { type: "text", text: "answer" },
      { type: "text", text: "\n" },
      { type: "usage", usage: { input: 36, output: 14 } },
      { type: "result", status: "completed", text: "scripted answer" },
    ]);
  });

  it("a command is a shell tool; a declined one still starts and ends, marked declined", () => {
    const r = codexAppTurnReader();
    const cmd = { type: "commandExecution", id: "call_1", command: "/bin/bash -lc 'echo hello > out.txt'" };
    expect(r.notification("item/started", { item: { ...cmd, status: "inProgress" } })).toEqual([
      { type: "tool", phase: "start", name: "shell", summary: "/bin/bash -lc 'echo hello > out.txt'" },
    ]);
    expect(r.notification("item/completed", { item: { ...cmd, status: "failed", exitCode: 2 } })).toEqual([
      { type: "tool", phase: "end", name: "shell", summary: "failed (exit 2)" },
    ]);
    expect(r.notification("item/completed", { item: { ...cmd, id: "call_2", status: "declined" } })).toEqual([
      { type: "tool", phase: "start", name: "shell", summary: "/bin/bash -lc 'echo hello > out.txt'" },
      { type: "tool", phase: "end", name: "shell", summary: "declined" },
    ]);
  });

  it("a failed turn errors with codex's message; an interrupted one leaves the outcome to the host", () => {
    expect(codexAppTurnReader().end({ status: "failed", error: { message: "high demand" } })).toEqual([
      { type: "result", status: "errored", reason: "high demand" },
    ]);
    expect(codexAppTurnReader().end({ status: "interrupted" })).toEqual([]);
  });
});

function driver(spec: Partial<SessionSpec> = {}) {
  const sent: Record<string, unknown>[] = [];
  const asked: [string, string | undefined][] = [];
  let answer: "allow" | "allow_always" | "deny" = "allow";
  const d = codexAppDriver(
    { protocol: "codex-app", argv: ["codex"], cwd: "/w", env: {}, ...spec },
    {
      write: (line) => sent.push(JSON.parse(line)),
      info: () => {},
      askPermission: async (tool, summary) => {
        asked.push([tool, summary]);
        return answer;
      },
    },
  );
  // codex's own messages: no `jsonrpc` member.
  const from = (m: Record<string, unknown>) => expect(d.line(JSON.stringify(m))).toBe(true);
  const reply = async (method: string, result: unknown) => {
    await new Promise((r) => setImmediate(r));
    const req = sent.findLast((m) => m.method === method);
    if (!req) throw new Error(`no ${method} sent`);
    from({ id: req.id, result });
  };
  return {
    d,
    sent,
    asked,
    from,
    reply,
    setAnswer: (a: typeof answer) => {
      answer = a;
    },
  };
}

describe("codexAppDriver", () => {
  it("resumes the thread, and a replayed usage of the thread's last turn is not the new turn's", async () => {
    const { d, sent, from, reply } = driver({ resume: THREAD });
    const opened = d.open();
    await reply("initialize", { userAgent: "codex" });
    await reply("thread/resume", { thread: { id: THREAD } });
    await expect(opened).resolves.toBe(THREAD);
    expect(sent.find((m) => m.method === "thread/resume")?.params).toMatchObject({
      threadId: THREAD,
      cwd: "/w",
      approvalPolicy: "never",
    });
    const got: AgentMessage[] = [];
    let ended = false;
    const turn = d
      .prompt("and the first thing I said?", (m) => got.push(m))
      .then(() => {
        ended = true;
      });
    // The resumed thread's replay arrives while the new turn is starting.
    from(usage(OLD_TURN, 500, 500));
    await reply("turn/start", { turn: { id: TURN, status: "inProgress" } });
    from({ method: "turn/started", params: { threadId: THREAD, turn: { id: TURN } } });
    from({
      method: "item/completed",
      params: { threadId: THREAD, turnId: TURN, item: { type: "agentMessage", id: "m", text: "tangerine" } },
    });
    from(usage(TURN, 12, 7));
    expect(ended).toBe(false);
    from({ method: "turn/completed", params: { threadId: THREAD, turn: { id: TURN, status: "completed" } } });
    await turn;
    expect(got.filter((m) => m.type !== "text")).toEqual([
      { type: "usage", usage: { input: 12, output: 7 } },
      { type: "result", status: "completed", text: "tangerine" },
    ]);
  });

  it("an interrupt asked for before codex named the turn goes once it does", async () => {
    const { d, sent, from, reply } = driver();
    const opened = d.open();
    await reply("initialize", {});
    await reply("thread/start", { thread: { id: THREAD } });
    await opened;
    const turn = d.prompt("write a long story", () => {});
    d.interrupt();
    expect(sent.some((m) => m.method === "turn/interrupt")).toBe(false);
    await reply("turn/start", { turn: { id: TURN, status: "inProgress" } });
    await new Promise((r) => setImmediate(r));
    expect(sent.find((m) => m.method === "turn/interrupt")?.params).toEqual({
      threadId: THREAD,
      turnId: TURN,
    });
    from({
      method: "turn/completed",
      params: { threadId: THREAD, turn: { id: TURN, status: "interrupted" } },
    });
    await turn;
  });

  it("a command approval asks the parent and answers in codex's words", async () => {
    const { d, sent, asked, from, setAnswer } = driver();
    from({
      id: 0,
      method: "item/commandExecution/requestApproval",
      params: { threadId: THREAD, turnId: TURN, itemId: "call_1", command: "/bin/bash -lc 'echo hi'" },
    });
    setAnswer("deny");
    // A file change's request names its item only: the summary is what the item said it changes.
    from({
      method: "item/started",
      params: {
        threadId: THREAD,
        turnId: TURN,
        item: {
          type: "fileChange",
          id: "call_2",
          changes: [{ path: "a.txt", kind: { type: "add" }, diff: "" }],
        },
      },
    });
    from({
      id: 1,
      method: "item/fileChange/requestApproval",
      params: { threadId: THREAD, itemId: "call_2" },
    });
    from({ id: 2, method: "item/tool/requestUserInput", params: {} });
    setAnswer("allow_always");
    from({
      id: 3,
      method: "item/commandExecution/requestApproval",
      params: { threadId: THREAD, command: "ls" },
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(asked).toEqual([
      ["shell", "/bin/bash -lc 'echo hi'"],
      ["edit", "add a.txt"],
      ["shell", "ls"],
    ]);
    const answers = Object.fromEntries(sent.filter((m) => !("method" in m)).map((m) => [m.id, m]));
    expect(answers[0]).toMatchObject({ result: { decision: "accept" } });
    expect(answers[1]).toMatchObject({ result: { decision: "decline" } });
    expect(answers[2]).toMatchObject({ error: { code: -32601 } });
    // --always: codex stops asking for this command for the rest of the session.
    expect(answers[3]).toMatchObject({ result: { decision: "acceptForSession" } });
    d.close(new Error("gone"));
  });
});
