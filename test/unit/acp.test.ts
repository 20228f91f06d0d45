// The Agent Client Protocol pieces of runner mode `session`: the JSON-RPC peer and the turn reader,
// driven with the messages the pinned gemini (--acp) and opencode (acp) send (recorded against the scripted endpoint).
import { describe, expect, it } from "vitest";
import { RpcError, RpcPeer } from "../../src/runners/acp/rpc.js";
import { acpTurnReader, errorMessage, failureOf } from "../../src/runners/acp/updates.js";

function pair() {
  const sent: Record<string, unknown>[] = [];
  const notes: [string, unknown][] = [];
  const peer = new RpcPeer((line) => sent.push(JSON.parse(line)), {
    request: async (method, params) => {
      if (method === "fail") throw new RpcError(-32000, "nope");
      return { echoed: method, params };
    },
    notification: (method, params) => notes.push([method, params]),
  });
  return { peer, sent, notes };
}

describe("RpcPeer", () => {
  it("matches responses to requests by id, results and errors alike", async () => {
    const { peer, sent } = pair();
    const a = peer.request("initialize", { v: 1 });
    const b = peer.request("session/prompt", {});
    expect(sent.map((m) => [m.id, m.method])).toEqual([
      [1, "initialize"],
      [2, "session/prompt"],
    ]);
    peer.line(
      JSON.stringify({ jsonrpc: "2.0", id: 2, error: { code: 500, message: "upstream", data: "x" } }),
    );
    peer.line(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { ok: true } }));
    await expect(a).resolves.toEqual({ ok: true });
    const err = await b.catch((e) => e);
    expect(err).toBeInstanceOf(RpcError);
    expect(err).toMatchObject({ code: 500, message: "upstream", data: "x" });
  });

  it("answers the other side's requests, errors included, and passes notifications on", async () => {
    const { peer, sent, notes } = pair();
    peer.line(
      JSON.stringify({ jsonrpc: "2.0", id: "r1", method: "session/request_permission", params: { a: 1 } }),
    );
    peer.line(JSON.stringify({ jsonrpc: "2.0", id: 7, method: "fail", params: {} }));
    peer.line(JSON.stringify({ jsonrpc: "2.0", method: "session/update", params: { u: 1 } }));
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toContainEqual({
      jsonrpc: "2.0",
      id: "r1",
      result: { echoed: "session/request_permission", params: { a: 1 } },
    });
    expect(sent).toContainEqual({ jsonrpc: "2.0", id: 7, error: { code: -32000, message: "nope" } });
    expect(notes).toEqual([["session/update", { u: 1 }]]);
  });

  it("says a line is not protocol (a banner, half a JSON) so the caller can show it", () => {
    const { peer } = pair();
    expect(peer.line("Loaded cached credentials.")).toBe(false);
    expect(peer.line('{"jsonrpc":"2.0",')).toBe(false);
    expect(peer.line('{"other":1}')).toBe(false);
  });

  it("fails every open request once the other side is gone, and refuses new ones", async () => {
    const { peer } = pair();
    const a = peer.request("session/prompt", {});
    peer.close(new Error("the agent process ended (exit code 1)"));
    await expect(a).rejects.toThrow(/exit code 1/);
    await expect(peer.request("x", {})).rejects.toThrow(/exit code 1/);
  });
});

const update = (u: Record<string, unknown>) => u;

describe("acpTurnReader", () => {
  it("streams text and takes the answer from the prompt's end, with usage in either spelling", () => {
    const r = acpTurnReader();
    expect(
      r.update(
        update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "scripted " } }),
      ),
    ).toEqual([{ type: "text", text: "scripted " }]);
    r.update(update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "answer 2" } }));
    expect(r.end({ stopReason: "end_turn", usage: { inputTokens: 12, outputTokens: 7 } })).toEqual([
      { type: "text", text: "\n" },
      { type: "usage", usage: { input: 12, output: 7 } },
      { type: "result", status: "completed", text: "scripted answer 2" },
    ]);
    const g = acpTurnReader();
    expect(
      g.end({
        stopReason: "end_turn",
        _meta: { quota: { token_count: { input_tokens: 3, output_tokens: 4 } } },
      }),
    ).toContainEqual({ type: "usage", usage: { input: 3, output: 4 } });
  });

  it("announces a tool once it runs, with the input a later update brought (opencode), and ends it once", () => {
    const r = acpTurnReader();
    const pending = {
      sessionUpdate: "tool_call",
      toolCallId: "call_1",
      title: "bash",
      kind: "execute",
      status: "pending",
      rawInput: { cwd: "/w" },
    };
    expect(r.update(pending)).toEqual([]);
    const running = {
      sessionUpdate: "tool_call_update",
      toolCallId: "call_1",
      status: "in_progress",
      title: "echo hello > out.txt",
      rawInput: { command: "echo hello > out.txt", cwd: "/w" },
    };
    expect(r.update(running)).toEqual([
      { type: "tool", phase: "start", name: "execute", summary: "echo hello > out.txt" },
    ]);
    expect(r.update(running)).toEqual([]);
    const done = { sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed" };
    expect(r.update(done)).toEqual([{ type: "tool", phase: "end", name: "execute", summary: "" }]);
    expect(r.update(done)).toEqual([]);
  });

  it("the answer is the text after the last tool; a failed tool says why", () => {
    const r = acpTurnReader();
    r.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Let me look." } });
    const out = r.update({
      sessionUpdate: "tool_call",
      toolCallId: "t",
      kind: "read",
      rawInput: { path: "a" },
    });
    expect(out[0]).toEqual({ type: "text", text: "\n" });
    expect(
      r.update({
        sessionUpdate: "tool_call_update",
        toolCallId: "t",
        status: "failed",
        rawOutput: { error: "ENOENT" },
      }),
    ).toEqual([{ type: "tool", phase: "end", name: "read", summary: "error: ENOENT" }]);
    r.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "No such file." } });
    expect(r.end({ stopReason: "end_turn" }).at(-1)).toEqual({
      type: "result",
      status: "completed",
      text: "No such file.",
    });
  });

  it("maps the stop reasons: limits are exhausted, a refusal errored, a cancel leaves it to the host", () => {
    expect(acpTurnReader().end({ stopReason: "max_tokens" }).at(-1)).toMatchObject({ status: "exhausted" });
    expect(acpTurnReader().end({ stopReason: "max_turn_requests" }).at(-1)).toMatchObject({
      status: "exhausted",
    });
    expect(acpTurnReader().end({ stopReason: "refusal" }).at(-1)).toMatchObject({ status: "errored" });
    expect(acpTurnReader().end({ stopReason: "cancelled" })).toEqual([]);
  });

  it("unwraps an upstream error body the agent passed on as its message (gemini)", () => {
    const body = JSON.stringify({ error: { type: "api_error", message: "scripted upstream failure (500)" } });
    expect(errorMessage(body)).toBe("scripted upstream failure (500)");
    expect(errorMessage("Internal error", { message: "boom" })).toBe("Internal error: boom");
    expect(errorMessage("plain")).toBe("plain");
  });

  it("keeps an error's data: `details` (claude-agent-acp, gemini), a JSON string (codex-acp), a plain string", () => {
    expect(errorMessage("Internal error", { details: "Query closed before response received" })).toBe(
      "Internal error: Query closed before response received",
    );
    const codex = JSON.stringify({ message: "No previous sessions found for this project." });
    expect(errorMessage("Internal error", codex)).toBe(
      "Internal error: No previous sessions found for this project.",
    );
    expect(errorMessage("Internal error", JSON.stringify({ error: { message: "quota" } }))).toBe(
      "Internal error: quota",
    );
    expect(errorMessage("Internal error", "disk full")).toBe("Internal error: disk full");
    expect(errorMessage("Internal error", "Internal error")).toBe("Internal error");
    expect(failureOf(new RpcError(-32603, "Internal error", { details: "no such session" }))).toBe(
      "Internal error: no such session",
    );
  });

  it("a failed tool says why from its output, never its command (codex-acp's rawOutput, content blocks)", () => {
    const r = acpTurnReader();
    const run = (id: string, rest: Record<string, unknown>) => {
      r.update({
        sessionUpdate: "tool_call",
        toolCallId: id,
        kind: "execute",
        title: "cat missing.txt",
        status: "in_progress",
        rawInput: { command: ["cat", "missing.txt"] },
      });
      return r.update({ sessionUpdate: "tool_call_update", toolCallId: id, status: "failed", ...rest });
    };
    const rawOutput = {
      command: ["cat", "missing.txt"],
      exit_code: 1,
      stderr: "cat: missing.txt: No such file",
    };
    expect(run("a", { rawOutput })).toEqual([
      {
        type: "tool",
        phase: "end",
        name: "execute",
        summary: "error: exit 1: cat: missing.txt: No such file",
      },
    ]);
    const content = [{ type: "content", content: { type: "text", text: "```\nPermission denied\n```" } }];
    expect(run("b", { content }).at(-1)).toMatchObject({ summary: "error: Permission denied" });
    expect(run("c", { rawOutput: { command: ["false"] } }).at(-1)).toMatchObject({
      summary: "error: failed",
    });
  });

  it("a turn the agent ends `cancelled` after a refused tool is completed with its text and a note", () => {
    const r = acpTurnReader();
    r.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Not allowed." } });
    r.denied("execute echo ok > perm.txt");
    expect(r.end({ stopReason: "cancelled" }).at(-1)).toEqual({
      type: "result",
      status: "completed",
      text: "Not allowed.",
      reason: "the agent ended its turn after the parent denied execute echo ok > perm.txt",
    });
  });
});
