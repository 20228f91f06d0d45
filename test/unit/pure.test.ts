import { describe, expect, it } from "vitest";
import { sanitize } from "../../src/child/render.js";
import { humanDuration, parseDuration, shellQuote } from "../../src/cli/format.js";
import { applyEvents, childStatus, emptyState } from "../../src/core/state.js";
import { parseProfile } from "../../src/profiles/profile.js";
import { expandCommand } from "../../src/runners/command.js";
import { parseMockOptions, taskLine } from "../../src/runners/mock/options.js";
import { parseAgentLine, parseStdoutLine } from "../../src/runners/protocol.js";
import { assertIdOrPrefix, uuidv7 } from "../../src/util/ids.js";

describe("ids", () => {
  it("uuidv7 ids are valid, unique and sort by creation", () => {
    const ids = Array.from({ length: 2000 }, () => uuidv7());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids.slice(0, 5))
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
  it("user ids are validated before they touch a path", () => {
    expect(assertIdOrPrefix("01A2b3c4")).toBe("01a2b3c4");
    for (const bad of [
      "../x",
      "abc",
      "a/b/c/d",
      "..",
      "",
      "0123456789abcdef0123456789abcdef012345678",
      "zzzz",
    ]) {
      expect(() => assertIdOrPrefix(bad)).toThrow(/invalid child id/);
    }
  });
});

describe("mock options", () => {
  it("reads every control word from mock: lines", () => {
    expect(
      parseMockOptions("task\nmock: sleep=1.5 tools=3 exit=7 bytes=10 hang crash stamp linger=120\nmore"),
    ).toEqual({
      sleep: 1.5,
      tools: 3,
      exit: 7,
      bytes: 10,
      hang: true,
      crash: true,
      stamp: true,
      linger: 120,
    });
    expect(parseMockOptions("no controls here")).toEqual({
      sleep: 0,
      tools: 0,
      hang: false,
      crash: false,
      stamp: false,
    });
    expect(parseMockOptions("mock: reply=hello%20world").reply).toBe("hello world");
  });
  it("the task line skips controls and strips control bytes", () => {
    expect(taskLine("mock: sleep=1\n\n Do \x1b[2Jthis ")).toBe("Do  [2Jthis");
  });
});

describe("runner protocol", () => {
  it("parses every agent message and treats the rest as raw", () => {
    expect(parseAgentLine('{"type":"text","text":"hi"}')).toEqual({ type: "text", text: "hi" });
    expect(parseAgentLine('{"type":"tool","phase":"start","name":"grep","summary":"x"}')).toEqual({
      type: "tool",
      phase: "start",
      name: "grep",
      summary: "x",
    });
    expect(parseAgentLine('{"type":"usage","input":1,"output":2,"cost":0.1}')).toEqual({
      type: "usage",
      usage: { input: 1, output: 2, cost: 0.1 },
    });
    expect(parseAgentLine('{"type":"result","status":"errored","text":"no"}')).toEqual({
      type: "result",
      status: "errored",
      text: "no",
    });
    expect(parseAgentLine('{"type":"result","status":"exhausted","reason":"max turns"}')).toEqual({
      type: "result",
      status: "exhausted",
      reason: "max turns",
    });
    expect(parseAgentLine('{"type":"session","id":"s1"}')).toEqual({ type: "session", id: "s1" });
    for (const raw of [
      "plain text",
      '{"type":"result","status":"maybe"}',
      "{broken",
      '{"type":"tool","phase":"middle","name":"x"}',
    ]) {
      expect(parseAgentLine(raw).type).toBe("raw");
    }
    expect(parseStdoutLine("text", '{"type":"text","text":"x"}')).toEqual({
      type: "text",
      text: '{"type":"text","text":"x"}\n',
    });
  });
  it("command argv placeholders are substituted word by word, never through a shell", () => {
    expect(expandCommand(["tool", "--in={prompt_file}", "{prompt}"], "a b; rm -rf ~", "/p.txt")).toEqual([
      "tool",
      "--in=/p.txt",
      "a b; rm -rf ~",
    ]);
    expect(expandCommand(["echo"], "$(x)", "/p")).toEqual(["echo", "$(x)"]);
  });
});

describe("pane rendering", () => {
  it("strips escape sequences and control bytes but keeps text, LF and TAB", () => {
    expect(sanitize("a\x1b[2Jb\x1b]0;title\x07c\td\r\ne\x00\x07f")).toBe("abc\td\nef");
  });
});

describe("cli formatting", () => {
  it("durations", () => {
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("2m")).toBe(120_000);
    expect(parseDuration("1.5")).toBe(1500);
    expect(() => parseDuration("soon")).toThrow(/invalid duration/);
    expect(humanDuration(3_723_000)).toBe("1h02m");
    expect(humanDuration(65_000)).toBe("1m05s");
  });
  it("shell quoting for display", () => {
    expect(shellQuote(["tmux", "-L", "a b", ";", "it's"])).toBe("tmux -L 'a b' ';' 'it'\\''s'");
  });
});

describe("child state from events", () => {
  const base = { v: 1, eventId: "e", ts: "2026-01-01T00:00:00.000Z" };
  it("folds a lifecycle into a status", () => {
    const s = emptyState();
    expect(childStatus(s, 1)).toBe("starting");
    applyEvents(s, [{ ...base, seq: 1, type: "child_started", pid: 1, runner: "mock", by: "spawn" }]);
    // A turn still in the inbox holds no run slot yet: queued, never running.
    expect(childStatus(s, 1)).toBe("queued");
    applyEvents(s, [
      {
        ...base,
        seq: 2,
        type: "turn_started",
        turnId: "t1",
        source: "inbox",
        promptBytes: 1,
        promptSha256: "x",
        promptPath: "p",
      },
    ]);
    expect(childStatus(s, 0)).toBe("running");
    applyEvents(s, [
      { ...base, seq: 3, type: "usage", turnId: "t1", usage: { input: 2, output: 3 } },
      { ...base, seq: 4, type: "usage", turnId: "t1", usage: { input: 1, output: 1, cost: 0.5 } },
      { ...base, seq: 5, type: "completion", turnId: "t1", status: "completed", by: "child" },
    ]);
    expect(childStatus(s, 0)).toBe("idle");
    expect(s.usage).toEqual({ input: 3, output: 4, cost: 0.5 });
    applyEvents(s, [{ ...base, seq: 6, type: "child_exited", reason: "lost", by: "parent" }]);
    expect(childStatus(s, 0)).toBe("lost");
  });
});

describe("profiles", () => {
  it("a bad field warns, naming the file and field, and the rest still works", () => {
    const p = parseProfile(
      "/x/agents/rev.md",
      "---\ndescription: Reviews\nrunner: mock\nmodel: 42\ncommand: nope\n---\nBody text\n",
    );
    expect(p).toMatchObject({
      name: "rev",
      description: "Reviews",
      runner: "mock",
      systemPrompt: "Body text",
    });
    expect(p.model).toBeUndefined();
    expect(p.warnings).toEqual([
      expect.stringContaining('/x/agents/rev.md: field "model"'),
      expect.stringContaining('field "command"'),
    ]);
  });
});

describe("formatUsd", () => {
  it("shows three significant digits below a dollar, cents above, and no float noise", async () => {
    const { formatUsd } = await import("../../src/util/cost.js");
    expect(formatUsd(0.00042300000000000004)).toBe("$0.000423");
    expect(formatUsd(0)).toBe("$0");
    expect(formatUsd(12.345)).toBe("$12.35");
    expect(formatUsd(0.5)).toBe("$0.5");
  });
});
