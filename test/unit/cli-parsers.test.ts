// Each agent CLI's stream parser against output the real CLI printed here (test/fixtures/streams, recorded
// against the scripted endpoint): the answer, the tools, usage, the session id and the outcome.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { claudeParser } from "../../src/runners/claude/runner.js";
import { codexParser } from "../../src/runners/codex/runner.js";
import { geminiParser } from "../../src/runners/gemini/runner.js";
import { opencodeParser } from "../../src/runners/opencode/runner.js";
import { piParser } from "../../src/runners/pi/runner.js";
import type { AgentMessage, StreamParser } from "../../src/runners/types.js";

const STREAMS = path.join(import.meta.dirname, "..", "fixtures", "streams");
const PARSERS: Record<string, () => StreamParser> = {
  claude: claudeParser,
  codex: codexParser,
  pi: piParser,
  opencode: opencodeParser,
  gemini: geminiParser,
};

function parse(cli: string, recording: string, exit = { code: 0, signal: null }) {
  const parser = PARSERS[cli]!();
  const lines = fs.readFileSync(path.join(STREAMS, `${cli}-${recording}.jsonl`), "utf8").split("\n");
  const msgs: AgentMessage[] = [...lines.flatMap((l) => parser.line(l)), ...(parser.end?.(exit) ?? [])];
  const of = <T extends AgentMessage["type"]>(t: T) =>
    msgs.filter((m): m is Extract<AgentMessage, { type: T }> => m.type === t);
  const usage = of("usage").reduce(
    (a, m) => ({ input: a.input + m.usage.input, output: a.output + m.usage.output }),
    {
      input: 0,
      output: 0,
    },
  );
  return {
    text: of("text")
      .map((m) => m.text)
      .join(""),
    tools: of("tool").map((m) => [m.phase, m.summary]),
    usage,
    sessions: [...new Set(of("session").map((m) => m.id))],
    results: of("result"),
    raw: of("raw"),
  };
}

describe.each(Object.keys(PARSERS))("%s stream parser (recorded output of the real CLI)", (cli) => {
  it("a plain answer: text, one session id, usage, completed with the answer", () => {
    const r = parse(cli, "text");
    expect(r.text.trim()).toMatch(/^scripted answer \d$/);
    expect(r.sessions).toHaveLength(1);
    expect(r.usage.input).toBeGreaterThan(0);
    expect(r.usage.output).toBeGreaterThan(0);
    expect(r.results).toHaveLength(1);
    expect(r.results[0]).toMatchObject({
      status: "completed",
      text: expect.stringMatching(/^scripted answer \d$/),
    });
    expect(r.raw).toEqual([]);
  });

  it("a shell tool call: start and end with the command, then the final answer alone", () => {
    const r = parse(cli, "tool");
    expect(r.tools.map((t) => t[0])).toEqual(["start", "end"]);
    expect(r.tools[0]![1]).toContain("echo hello > out.txt");
    expect(r.tools[1]![1]).toBe("");
    expect(r.results[0]).toMatchObject({ status: "completed", text: "The file out.txt now says hello." });
  });
});

describe("errors and limits map to outcomes", () => {
  it.each([
    ["claude", /API Error: 500 scripted upstream failure/],
    ["codex", /experiencing high demand/],
    ["pi", /500 scripted upstream failure/],
    ["opencode", /scripted upstream failure \(500\)/],
    ["gemini", /scripted upstream failure \(500\)/],
  ])("%s: an upstream 500 is errored with the CLI's message", (cli, message) => {
    const r = parse(cli, "error500", { code: 1, signal: null });
    const last = r.results.at(-1);
    expect(last?.status).toBe("errored");
    expect(last?.reason).toMatch(message);
  });

  it("codex: reconnect notices are progress, not the outcome", () => {
    const parser = codexParser();
    const msgs = parser.line('{"type":"error","message":"Reconnecting... 1/5"}');
    expect(msgs).toEqual([{ type: "progress", text: "Reconnecting... 1/5" }]);
  });

  it("claude: max turns settles exhausted, not errored", () => {
    const r = parse("claude", "maxturns", { code: 1, signal: null });
    expect(r.results.at(-1)).toMatchObject({
      status: "exhausted",
      reason: expect.stringMatching(/maximum number of turns/),
    });
  });

  it("opencode: the step that stopped is the result, at once; a tool-calls step is not", () => {
    const parser = opencodeParser();
    parser.line('{"type":"step_start","sessionID":"ses_1","part":{}}');
    parser.line('{"type":"text","sessionID":"ses_1","part":{"text":"calling"}}');
    const tools = parser.line(
      '{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"input":1,"output":1}}}',
    );
    expect(tools.filter((m) => m.type === "result")).toEqual([]);
    parser.line('{"type":"step_start","sessionID":"ses_1","part":{}}');
    parser.line('{"type":"text","sessionID":"ses_1","part":{"text":"done"}}');
    const stop = parser.line(
      '{"type":"step_finish","part":{"reason":"stop","tokens":{"input":1,"output":1}}}',
    );
    expect(stop.filter((m) => m.type === "result")).toEqual([
      { type: "result", status: "completed", text: "done" },
    ]);
    // The exit adds no second result.
    expect(parser.end?.({ code: 0, signal: null })).toEqual([]);
  });

  it("opencode: no closing record and a failed exit is left to the exit status", () => {
    const parser = opencodeParser();
    parser.line('{"type":"step_start","sessionID":"ses_1","part":{}}');
    expect(parser.end?.({ code: 1, signal: null })).toEqual([]);
  });

  it("a line that is not JSON is shown as is, never dropped or fatal", () => {
    for (const make of Object.values(PARSERS)) {
      expect(make().line("WARNING: something odd")).toEqual([
        { type: "raw", text: "WARNING: something odd" },
      ]);
      expect(make().line("{not json")).toEqual([{ type: "raw", text: "{not json" }]);
    }
  });
});

describe("claude tool results", () => {
  it("a failed tool's result, as a string or as content blocks, is summarised on the end record", () => {
    const p = claudeParser();
    p.line(
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"false"}}]}}',
    );
    const blocks = p.line(
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"Exit code 1"}]}]}}',
    );
    expect(blocks).toEqual([{ type: "tool", phase: "end", name: "Bash", summary: "error: Exit code 1" }]);
  });
});

describe("claude with --include-partial-messages (recorded)", () => {
  it("text arrives as deltas and is not repeated by the full message; tools and the answer are unchanged", () => {
    const r = parse("claude", "partial-tool");
    expect(r.text.match(/The file out.txt now says hello\./g)).toHaveLength(1);
    expect(r.tools.map((t) => t[0])).toEqual(["start", "end"]);
    expect(r.results.at(-1)).toMatchObject({ status: "completed", text: "The file out.txt now says hello." });
  });
});

describe("claude permission denials", () => {
  it("a tool refused for lack of permission becomes one progress note naming it", () => {
    const msgs = claudeParser().line(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "I could not fetch it.",
        session_id: "s1",
        usage: { input_tokens: 3, output_tokens: 4 },
        permission_denials: [
          { tool_name: "WebFetch", tool_use_id: "t1", tool_input: {} },
          { tool_name: "WebFetch", tool_use_id: "t2", tool_input: {} },
        ],
      }),
    );
    expect(msgs.filter((m) => m.type === "progress")).toEqual([
      { type: "progress", text: "permission denied for WebFetch (allow it in the profile's tools)" },
    ]);
    expect(msgs.filter((m) => m.type === "permission")).toEqual([
      { type: "permission", state: "denied", tool: "WebFetch" },
    ]);
    expect(msgs.at(-1)).toMatchObject({ type: "result", status: "completed" });
  });
});
