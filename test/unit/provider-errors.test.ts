// Each agent CLI's provider errors as the real CLI printed them (test/fixtures/streams/<cli>-<kind>.jsonl for
// the one-shot stream, <cli>-session-<kind>.jsonl for the long-lived protocol, recorded against the scripted
// endpoint answering 429 / quota / 401 / overloaded in the provider's own format): each is classified.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { RpcError } from "../../src/runners/acp/rpc.js";
import { acpProviderError } from "../../src/runners/acp/updates.js";
import { aiderProviderError } from "../../src/runners/aider/provider.js";
import { aiderParser } from "../../src/runners/aider/runner.js";
import { claudeParser } from "../../src/runners/claude/runner.js";
import { claudeTui } from "../../src/runners/claude/tui.js";
import { codexAppTurnReader } from "../../src/runners/codex/app-server.js";
import { codexParser } from "../../src/runners/codex/runner.js";
import { codexTui } from "../../src/runners/codex/tui.js";
import { classifyProvider, classifyText, durationSeconds } from "../../src/runners/common/provider-error.js";
import { geminiParser } from "../../src/runners/gemini/runner.js";
import { geminiTui } from "../../src/runners/gemini/tui.js";
import { opencodeParser } from "../../src/runners/opencode/runner.js";
import { piParser } from "../../src/runners/pi/runner.js";
import { parseAgentLine } from "../../src/runners/protocol.js";
import type { AgentMessage, StreamParser } from "../../src/runners/types.js";

const STREAMS = path.join(import.meta.dirname, "..", "fixtures", "streams");
const lines = (name: string) =>
  fs
    .readFileSync(path.join(STREAMS, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((l) => l.trim());
const PARSERS: Record<string, () => StreamParser> = {
  claude: claudeParser,
  codex: codexParser,
  pi: piParser,
  opencode: opencodeParser,
  gemini: geminiParser,
};

/** The one-shot stream's final result. */
function resultOf(cli: string, kind: string) {
  const parser = PARSERS[cli]!();
  const msgs: AgentMessage[] = [
    ...lines(`${cli}-${kind}`).flatMap((l) => parser.line(l)),
    ...(parser.end?.({ code: 1, signal: null }) ?? []),
  ];
  const results = msgs.filter((m): m is Extract<AgentMessage, { type: "result" }> => m.type === "result");
  return results.at(-1);
}

const KINDS = ["rate_limit", "quota", "auth", "overloaded"] as const;
// Recorded with the rate limit's reset 120 s ahead (opencode: 3 s, its own retries honour the header).
const RESET_SECONDS: Record<string, number> = { claude: 0, codex: 0, pi: 120, gemini: 120, opencode: 3 };

describe("one-shot streams: each CLI's provider errors are classified", () => {
  for (const cli of Object.keys(PARSERS)) {
    for (const kind of KINDS) {
      it(`${cli} ${kind}`, () => {
        const r = resultOf(cli, kind);
        expect(r?.status).toBe("errored");
        expect(r?.providerError?.kind).toBe(kind);
        expect(r?.providerError?.message).toBeTruthy();
      });
    }
    if (RESET_SECONDS[cli])
      it(`${cli} rate_limit carries the reset time the CLI printed`, () => {
        const r = resultOf(cli, "rate_limit")!;
        expect(Date.parse(r.providerError!.resetAt!)).toBeGreaterThan(Date.now());
      });
  }
  it("an upstream 500 is no provider error of the four", () => {
    for (const cli of Object.keys(PARSERS)) expect(resultOf(cli, "error500")?.providerError).toBeUndefined();
  });
});

describe("session protocols: codex app-server and ACP (gemini, opencode)", () => {
  for (const kind of KINDS) {
    it(`codex app-server ${kind}: codexErrorInfo`, () => {
      const done = lines(`codex-session-${kind}`)
        .map((l) => JSON.parse(l))
        .find((o) => o.method === "turn/completed");
      const out = codexAppTurnReader().end(done.params.turn);
      const r = out.find((m) => m.type === "result");
      expect(r).toMatchObject({ status: "errored", providerError: { kind } });
    });
    for (const cli of ["gemini", "opencode"])
      it(`${cli} ACP ${kind}: the session/prompt error`, () => {
        const err = lines(`${cli}-session-${kind}`)
          .map((l) => JSON.parse(l))
          .find((o) => o.error && o.id !== undefined).error;
        const e = acpProviderError(new RpcError(err.code, err.message, err.data));
        expect(e?.kind).toBe(kind);
        if (kind === "rate_limit") expect(Date.parse(e!.resetAt!)).toBeGreaterThan(Date.now());
      });
  }
});

describe("the shared classifier", () => {
  const now = Date.parse("2026-01-01T00:00:00Z");
  it("reads provider types, statuses and reset headers", () => {
    expect(classifyProvider({ status: 429, codes: ["insufficient_quota"], message: "m" }, now)?.kind).toBe(
      "quota",
    );
    expect(classifyProvider({ status: 429, headers: { "retry-after": "30" }, message: "m" }, now)).toEqual({
      kind: "rate_limit",
      resetAt: "2026-01-01T00:00:30.000Z",
      message: "m",
    });
    expect(
      classifyProvider({ status: 429, headers: { "x-ratelimit-reset-requests": "1m30s" }, message: "m" }, now)
        ?.resetAt,
    ).toBe("2026-01-01T00:01:30.000Z");
    expect(
      classifyProvider(
        {
          codes: ["rate_limit_error"],
          headers: { "anthropic-ratelimit-unified-reset": "1767225700" },
          message: "m",
        },
        now,
      )?.resetAt,
    ).toBe("2026-01-01T00:01:40.000Z");
    expect(classifyProvider({ status: 401, message: "m" })?.kind).toBe("auth");
    expect(classifyProvider({ status: 529, message: "m" })?.kind).toBe("overloaded");
    expect(classifyProvider({ status: 500, message: "m" })).toBeUndefined();
    expect(classifyProvider({ status: 400, codes: ["invalid_request_error"], message: "m" })).toBeUndefined();
  });
  it("reads a CLI's own words only for what they say", () => {
    expect(classifyText("500 scripted upstream failure (500)")).toBeUndefined();
    expect(classifyText("the model said something about a rate")).toBeUndefined();
    expect(classifyText("429 Rate limit reached. Please try again in 20s.", undefined, now)?.resetAt).toBe(
      "2026-01-01T00:00:20.000Z",
    );
    expect(durationSeconds("6m0.5s")).toBe(360.5);
  });
  it("muster's own agent protocol carries a provider error on an errored result", () => {
    const m = parseAgentLine(
      JSON.stringify({
        type: "result",
        status: "errored",
        reason: "x",
        providerError: { kind: "quota", resetAt: "2026-01-01T01:00:00Z", message: "x" },
      }),
    );
    expect(m).toMatchObject({ providerError: { kind: "quota", resetAt: "2026-01-01T01:00:00.000Z" } });
    const odd = parseAgentLine(
      JSON.stringify({ type: "result", status: "errored", providerError: { kind: "weather" } }),
    );
    expect(odd).not.toHaveProperty("providerError");
  });
});

// Aider prints litellm's exception text, its own explanation and its retries as plain text. Aider (Python, not
// on npm) cannot be installed here: test/fixtures/streams/aider-<kind>.txt are its --no-pretty stdout as its
// send_message prints them (aider/coders/base_coder.py, aider/exceptions.py: retried with the delay doubling
// until past 60 s) with litellm's exception text for the scripted endpoint's bodies
// (litellm_core_utils/exception_mapping_utils.py), wrapped at 80 columns as aider's console wraps a pipe;
// aider-older-quota.txt is the shape an aider user posted (an older litellm quoting the whole body).
describe("aider: litellm's exception text, as aider prints it", () => {
  const aider = (name: string) => {
    const parser = aiderParser("/nonexistent/aider.chat.history.md");
    const text = fs.readFileSync(path.join(STREAMS, `aider-${name}.txt`), "utf8");
    const msgs = [
      ...text
        .split("\n")
        .slice(0, -1)
        .flatMap((l) => parser.line(l)),
      ...(parser.end?.({ code: 0, signal: null }) ?? []),
    ];
    return msgs.filter((m): m is Extract<AgentMessage, { type: "result" }> => m.type === "result").at(-1);
  };
  const cases: [string, string][] = [
    ["rate_limit", "rate_limit"],
    ["quota", "quota"],
    ["auth", "auth"],
    ["overloaded", "overloaded"],
    ["anthropic-quota", "quota"],
    ["anthropic-overloaded", "overloaded"],
    ["older-quota", "quota"],
  ];
  for (const [name, kind] of cases)
    it(`${name} → ${kind}`, () => {
      const r = aider(name);
      expect(r?.status).toBe("errored");
      expect(r?.providerError?.kind).toBe(kind);
      // The whole exception, its wrapped lines joined, not aider's explanation.
      expect(r?.providerError?.message).toMatch(/^litellm\.\w+: /);
      expect(r?.providerError?.message).not.toContain("\n");
    });
  it("the rate limit carries the reset time the provider's message gave", () => {
    expect(Date.parse(aider("rate_limit")!.providerError!.resetAt!)).toBeGreaterThan(Date.now() + 100_000);
  });
  it("an upstream 500 is no provider error, though aider says 'down or overloaded' for it too", () => {
    const r = aider("error500");
    expect(r?.status).toBe("errored");
    expect(r?.reason).toMatch(/^litellm\.InternalServerError: /);
    expect(r?.providerError).toBeUndefined();
  });
  it("aider's explanations and retries are progress, never the answer", () => {
    const parser = aiderParser("/nonexistent/h.md");
    const text = fs.readFileSync(path.join(STREAMS, "aider-overloaded.txt"), "utf8");
    const msgs = text.split("\n").flatMap((l) => parser.line(l));
    expect(msgs.filter((m) => m.type === "text")).toEqual([]);
    expect(msgs.some((m) => m.type === "progress" && m.text.startsWith("Retrying in 32.0 seconds"))).toBe(
      true,
    );
  });
  it("a retry that then succeeds completes with the answer after it", () => {
    const parser = aiderParser("/nonexistent/h.md");
    const lines = [
      "Aider v0.86.1",
      "",
      "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached. Please try",
      "again in 1s.",
      "The API provider has rate limited you. Try again later or check your quotas.",
      "Retrying in 0.2 seconds...",
      "the answer",
      "",
      "Tokens: 1.2k sent, 30 received.",
    ];
    const msgs = [
      ...lines.flatMap((l) => parser.line(l)),
      ...(parser.end?.({ code: 0, signal: null }) ?? []),
    ];
    expect(msgs.find((m) => m.type === "result")).toEqual({
      type: "result",
      status: "completed",
      text: "the answer\n",
    });
  });
  it("the litellm classes read alone", () => {
    expect(aiderProviderError("litellm.PermissionDeniedError: AnthropicException - forbidden")?.kind).toBe(
      "auth",
    );
    expect(
      aiderProviderError("litellm.APIConnectionError: OpenAIException - Connection error."),
    ).toBeUndefined();
    expect(aiderProviderError("litellm.BadRequestError: OpenAIException - bad")).toBeUndefined();
    expect(aiderProviderError("not litellm")).toBeUndefined();
  });
});

// Mode tui: Claude Code's StopFailure hook record, Codex's rollout and Gemini CLI's chat recording, as the pinned
// TUIs wrote them against the scripted endpoint (test/fixtures/streams/<cli>-tui-<kind>-*).
describe("TUI mode: the API error that ended a run", () => {
  it("Claude Code: StopFailure names the error; the run fails with it", () => {
    const recs = lines("claude-tui-quota-hooks")
      .map((l) => JSON.parse(l))
      .map((h) => claudeTui.signal(h));
    const stop = recs.find((s) => s?.kind === "stop");
    expect(stop).toMatchObject({
      kind: "stop",
      failure: { reason: "Credit balance is too low", providerError: { kind: "quota" } },
    });
  });
  for (const kind of KINDS)
    it(`Claude Code ${kind}: StopFailure, with the transcript's API error record where it wrote one`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-claude-tr-"));
      try {
        const file = path.join(dir, "session.jsonl");
        const recorded = path.join(STREAMS, `claude-tui-${kind}-transcript.jsonl`);
        // A refused key is not recorded in the transcript: the hook's name alone says it.
        if (fs.existsSync(recorded)) fs.copyFileSync(recorded, file);
        const hook = lines(`claude-tui-${kind}-hooks`)
          .map((l) => JSON.parse(l))
          .find((h) => h.event === "stop-failure");
        const s = claudeTui.signal({ ...hook, payload: { ...hook.payload, transcript_path: file } });
        expect(s?.kind === "stop" && s.failure?.providerError?.kind).toBe(kind);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  it("Claude Code: a 529 is `server_error` in StopFailure; without the transcript's record it is no kind", () => {
    const hook = lines("claude-tui-overloaded-hooks")
      .map((l) => JSON.parse(l))
      .find((h) => h.event === "stop-failure");
    expect(hook.payload.error).toBe("server_error");
    const s = claudeTui.signal({
      ...hook,
      payload: { ...hook.payload, transcript_path: "/nonexistent/t.jsonl" },
    });
    expect(s).toMatchObject({ kind: "stop", failure: { reason: expect.stringContaining("529 Overloaded") } });
    expect(s?.kind === "stop" && s.failure?.providerError).toBeUndefined();
  });
  it("Claude Code: each StopFailure error name it documents maps to its kind; others to none", () => {
    const kindOf = (error: string) => {
      const s = claudeTui.signal({ event: "stop-failure", payload: { error, last_assistant_message: "x" } });
      return s?.kind === "stop" ? s.failure?.providerError?.kind : "no stop";
    };
    // The matcher values the pinned 2.1.332 lists for StopFailure.
    expect(kindOf("billing_error")).toBe("quota");
    expect(kindOf("rate_limit")).toBe("rate_limit");
    expect(kindOf("authentication_failed")).toBe("auth");
    expect(kindOf("overloaded")).toBe("overloaded");
    for (const other of [
      "server_error",
      "invalid_request",
      "model_not_found",
      "max_output_tokens",
      "unknown",
    ])
      expect(kindOf(other)).toBeUndefined();
  });
  it("Gemini CLI: AfterAgent still comes; its recording's last record of the run is the API error", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-gemini-rec-"));
    try {
      const file = path.join(dir, "session.jsonl");
      const stop = () =>
        geminiTui.signal({
          event: "stop",
          payload: { transcript_path: file, prompt_response: "[no response text]" },
        });
      fs.writeFileSync(file, fs.readFileSync(path.join(STREAMS, "gemini-tui-quota-recording.jsonl")));
      expect(stop()).toMatchObject({
        kind: "stop",
        failure: {
          reason: expect.stringMatching(/^\[API Error: You have exhausted your daily quota/),
          providerError: { kind: "quota" },
        },
      });
      // A later run that was answered: no failure of its own.
      fs.appendFileSync(
        file,
        `${JSON.stringify({ id: "u2", type: "user", content: [{ text: "again" }] })}\n${JSON.stringify({ id: "g2", type: "gemini", content: "hi" })}\n`,
      );
      const next = stop();
      expect(next?.kind === "stop" && next.failure).toBeFalsy();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
  for (const kind of ["rate_limit", "auth", "overloaded"])
    it(`Codex ${kind}: the rollout's task_complete error`, () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-codex-rollout-"));
      try {
        const file = path.join(dir, "rollout.jsonl");
        fs.copyFileSync(path.join(STREAMS, `codex-tui-${kind}-rollout.jsonl`), file);
        expect(codexTui.failure!(file, 0)?.providerError?.kind).toBe(kind);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  it("Codex: the rollout's task_complete carries the error (no Stop hook comes)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-codex-rollout-"));
    try {
      const file = path.join(dir, "rollout.jsonl");
      const text = fs.readFileSync(path.join(STREAMS, "codex-tui-quota-rollout.jsonl"), "utf8");
      // Before the turn's end is written, nothing has failed yet.
      const end = text.indexOf('"type":"task_complete"');
      fs.writeFileSync(file, text.slice(0, text.lastIndexOf("\n", end) + 1));
      expect(codexTui.failure!(file, 0)).toBeUndefined();
      fs.writeFileSync(file, text);
      expect(codexTui.failure!(file, 0)).toMatchObject({
        reason: "Quota exceeded. Check your plan and billing details.",
        providerError: { kind: "quota" },
      });
      // A run read from after it: not this one's failure.
      expect(codexTui.failure!(file, text.length)).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
