// The parts of mode tui that read what the CLIs give: hook payloads as the pinned versions sent
// them, the transcript's usage, and the two things read off the screen (a dialog, a draft in the input box).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { claudeTui } from "../../src/runners/claude/tui.js";
import { piTui } from "../../src/runners/pi/tui.js";
import { inputBoxText } from "../../src/runners/tui/screen-text.js";

const RULE = "─".repeat(60);
// Screens as captured from the pinned TUIs in tmux (trimmed of blank rows).
const CLAUDE_IDLE = [
  " ▐▛███▛█   Claude Code v2.1.332",
  "❯ say hi",
  "● scripted answer 1",
  RULE,
  "❯ ",
  RULE,
  "  ⏸ manual mode on",
].join("\n");
const CLAUDE_DRAFT = [
  " ▐▛███▛█   Claude Code v2.1.332",
  RULE,
  "❯ what was the word?",
  RULE,
  "  ⏸ manual mode on",
].join("\n");
const CLAUDE_TRUST = [
  RULE,
  " Accessing workspace:",
  " /tmp/tuix/work2",
  " Quick safety check: Is this a project you created or one you trust? (Like your own code, a",
  " Claude Code'll be able to read, edit, and execute files here.",
  " ❯ No, exit",
  "   Yes, I trust this folder",
  " Enter to confirm · Esc to cancel",
].join("\n");
const PI_DRAFT = [
  " pi v0.73.1",
  " say hi",
  " scripted answer 2",
  RULE,
  "say more",
  RULE,
  "/tmp/tuix/work",
  "↑12 ↓7",
].join("\n");
const PI_IDLE = [" pi v0.73.1", " say hi", RULE, "", RULE, "/tmp/tuix/work"].join("\n");

describe("mode tui adapters", () => {
  it("the input box is the text between the last two rules (Claude's ❯ dropped); empty after a submit", () => {
    expect(inputBoxText(CLAUDE_IDLE)).toBe("");
    expect(inputBoxText(CLAUDE_DRAFT)).toBe("what was the word?");
    expect(inputBoxText(PI_DRAFT)).toBe("say more");
    expect(inputBoxText(PI_IDLE)).toBe("");
    expect(inputBoxText("no rules at all")).toBe("");
  });

  it("a Claude Code start-up dialog is found, its text from the line that names it; a normal screen is none", () => {
    const text = claudeTui.dialog(CLAUDE_TRUST);
    expect(text).toMatch(/^Quick safety check: Is this a project you created or one you trust\?/);
    expect(text).toContain("Yes, I trust this folder");
    expect(claudeTui.dialog(CLAUDE_IDLE)).toBeUndefined();
    expect(claudeTui.dialog(CLAUDE_DRAFT)).toBeUndefined();
  });

  it("Claude Code's hook payloads (2.1.332) become ready, start and stop with the session and answer", () => {
    const base = { session_id: "4e38", transcript_path: "/t.jsonl", cwd: "/w" };
    expect(claudeTui.signal({ event: "ready", payload: { ...base, source: "startup" } })).toEqual({
      kind: "ready",
      sessionId: "4e38",
      transcript: "/t.jsonl",
    });
    expect(claudeTui.signal({ event: "start", payload: { ...base, prompt: "say hi" } })).toMatchObject({
      kind: "start",
      prompt: "say hi",
    });
    expect(
      claudeTui.signal({ event: "stop", payload: { ...base, last_assistant_message: "scripted answer 1" } }),
    ).toMatchObject({ kind: "stop", answer: "scripted answer 1", sessionId: "4e38" });
    expect(claudeTui.signal({ event: "other", payload: base })).toBeUndefined();
  });

  it("a turn's usage from Claude Code's transcript: its part only, a message written twice counted once", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-tuit-"));
    const file = path.join(dir, "t.jsonl");
    const asst = (id: string, text: string, out: number) =>
      `${JSON.stringify({ type: "assistant", message: { id, content: [{ type: "text", text }], usage: { input_tokens: 10, cache_read_input_tokens: 2, output_tokens: out } } })}\n`;
    fs.writeFileSync(file, asst("m0", "earlier turn", 100));
    const from = fs.statSync(file).size;
    fs.appendFileSync(file, `${JSON.stringify({ type: "user", message: { content: "q" } })}\n`);
    fs.appendFileSync(file, asst("m1", "", 3) + asst("m1", "", 3) + asst("m2", "the answer", 4));
    fs.appendFileSync(file, "{torn");
    expect(claudeTui.transcript!(file, from)).toEqual({
      answer: "the answer",
      usage: { input: 24, output: 7 },
    });
    expect(claudeTui.transcript!(path.join(dir, "missing"), 0)).toEqual({});
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("Pi's agent_end (through muster's extension) gives the last answer and every assistant message's usage", () => {
    const s = piTui.signal({
      event: "stop",
      payload: {
        session_id: "01a2",
        messages: [
          { role: "user", content: [{ type: "text", text: "q" }] },
          {
            role: "assistant",
            content: [{ type: "toolCall" }],
            usage: { input: 12, output: 7, cacheRead: 3 },
          },
          { role: "toolResult", content: [{ type: "text", text: "ok" }] },
          { role: "assistant", content: [{ type: "text", text: "done" }], usage: { input: 20, output: 2 } },
        ],
      },
    });
    expect(s).toEqual({ kind: "stop", sessionId: "01a2", answer: "done", usage: { input: 35, output: 9 } });
  });
});
