// Gemini CLI's mode tui adapter: hook payloads, the chat recording and screens as the pinned 0.61.0
// gave them (captured in tmux, trimmed of blank rows).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { geminiTui } from "../../src/runners/gemini/tui.js";

const RULE = "─".repeat(60);
// Narrow pane: one rule above the input line. Wide pane: the input line between rules, one more below it.
const NARROW_IDLE = [
  " > say hi",
  "✦ scripted answer 1",
  RULE,
  " YOLO Ctrl+Y",
  " *   Type your message or @path/to/file",
  " workspace (/directory)   sandbox   /model",
].join("\n");
const WIDE_DRAFT = [
  "> say hi",
  "✦ scripted answer 1",
  RULE,
  " YOLO Ctrl+Y",
  RULE,
  " * what was the word?",
  RULE,
  " workspace (/directory)   sandbox   /model",
].join("\n");
const WIDE_IDLE = [
  "> say hi",
  RULE,
  " YOLO Ctrl+Y",
  RULE,
  " *   Type your message or @path/to/file",
  RULE,
  " /tmp/x   no sandbox",
].join("\n");
const INSECURE = [
  "4. Be specific for the best results",
  "⚠  Security Warning: Skipping system settings file '/tmp/h/runner/tui-settings.json': Parent directory '/tmp' is insecure",
  "   '/tmp' is writable by group or others (mode: 41777).",
].join("\n");
const TRUST = [
  " ╭──────╮",
  " │ Do you trust the files in this folder? │",
  " │ ● 1. Trust folder (work) │",
  " ╰──────╯",
].join("\n");

/** A menu in Gemini's round box, as 0.61.0 draws it (the quota one captured from a run; rows trimmed). */
const menu = (...rows: string[]) =>
  ["> QUOTA-MARK hi", "╭────╮", "│ │", ...rows.map((r) => `│ ${r.padEnd(40)} │`), "│ │", "╰────╯"].join("\n");
const QUOTA = menu(
  "Usage limit reached for gemini-2.5-flash.",
  "/stats model for usage details",
  "/model to switch models.",
  "",
  "● 1. Keep trying",
  "  2. Stop",
);
// ProQuotaDialog for a terminal quota on a Pro model, and OverageMenuDialog: Stop is not always second.
const PRO_QUOTA = menu(
  "Usage limit reached for all Pro models.",
  "● 1. Switch to gemini-2.5-flash",
  "  2. Upgrade for higher limits",
  "  3. Stop",
);
const OVERAGE = menu(
  "Usage limit reached for gemini-2.5-pro.",
  "How would you like to proceed?",
  "● 1. Use AI Credits - Continue this request (Overage)",
  "  2. Manage - View balance and purchase more credits",
  "  3. Switch to gemini-2.5-flash",
  "  4. Stop - Abort request",
);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-tui-gemini-unit-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A chat recording as gemini 0.61.0 writes it (JSONL; `$set` lines rewrite the history). */
function recording(name: string, lines: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
  return file;
}
const head = { sessionId: "s1", projectHash: "h", startTime: "t", kind: "main" };
const user = (text: string) => ({ id: `u-${text}`, type: "user", content: [{ text }] });
const reply = (id: string, content: string, input: number, output: number) => ({
  id,
  type: "gemini",
  content,
  tokens: { input, output, cached: 0, thoughts: 0, tool: 0, total: input + output },
});

describe("gemini mode tui adapter", () => {
  it("the draft is the last marker line, at any width; the placeholder is no draft", () => {
    expect(geminiTui.draft(NARROW_IDLE)).toBe("");
    expect(geminiTui.draft(WIDE_DRAFT)).toBe("what was the word?");
    expect(geminiTui.draft(WIDE_IDLE)).toBe("");
    expect(geminiTui.draft("nothing here")).toBe("");
  });

  it("a refused settings file and the trust dialog are start-up blockers; an idle screen is none", () => {
    expect(geminiTui.dialog(INSECURE)).toMatch(/^⚠ {2}Security Warning: Skipping system settings file/);
    expect(geminiTui.dialog(TRUST)).toMatch(/^Do you trust the files in this folder\?/);
    expect(geminiTui.dialog(NARROW_IDLE)).toBeUndefined();
  });

  it("a provider's quota menu mid-run: its Stop item's number is the way out; no menu, or one without Stop, is none", () => {
    expect(geminiTui.stopChoice!(QUOTA)).toEqual({
      says: "Usage limit reached for gemini-2.5-flash.",
      choice: "Stop",
      keys: "2",
    });
    expect(geminiTui.stopChoice!(PRO_QUOTA)).toMatchObject({ choice: "Stop", keys: "3" });
    expect(geminiTui.stopChoice!(OVERAGE)).toMatchObject({ choice: "Stop - Abort request", keys: "4" });
    expect(geminiTui.stopChoice!(NARROW_IDLE)).toBeUndefined();
    expect(geminiTui.stopChoice!(TRUST)).toBeUndefined();
    // An answer that says the same words, with a numbered Stop in it, is no menu: only a box's rows are.
    expect(
      geminiTui.stopChoice!(
        "✦ Usage limit reached for gemini-2.5-flash. is what the log said; then:\n  2. Stop the server\n > next",
      ),
    ).toBeUndefined();
    // A box's Stop item after the box closed is not this menu's.
    expect(
      geminiTui.stopChoice!(`${menu("Usage limit reached for x.", "no choices yet")}\n  2. Stop`),
    ).toBeUndefined();
  });

  it("hook payloads: ready (a resume asks for a moment), start, tools, permission, stop", () => {
    const base = { session_id: "0b1c", transcript_path: "/nowhere.jsonl" };
    expect(geminiTui.signal({ event: "ready", payload: { ...base, source: "startup" } })).toEqual({
      kind: "ready",
      sessionId: "0b1c",
      transcript: "/nowhere.jsonl",
    });
    expect(geminiTui.signal({ event: "ready", payload: { ...base, source: "resume" } })).toMatchObject({
      kind: "ready",
      settleMs: expect.any(Number),
    });
    expect(geminiTui.signal({ event: "start", payload: { ...base, prompt: "say hi" } })).toMatchObject({
      kind: "start",
      prompt: "say hi",
    });
    expect(
      geminiTui.signal({
        event: "tool-start",
        payload: { ...base, tool_name: "run_shell_command", tool_input: { command: "echo hello > out.txt" } },
      }),
    ).toMatchObject({
      kind: "tool",
      phase: "start",
      name: "run_shell_command",
      summary: expect.stringContaining("echo hello"),
    });
    expect(
      geminiTui.signal({
        event: "tool-end",
        payload: {
          ...base,
          tool_name: "run_shell_command",
          tool_response: { llmContent: "x", error: { message: "no" } },
        },
      }),
    ).toMatchObject({ kind: "tool", phase: "end", summary: "error" });
    expect(
      geminiTui.signal({ event: "notification", payload: { ...base, notification_type: "ToolPermission" } }),
    ).toMatchObject({ kind: "permission" });
    expect(
      geminiTui.signal({ event: "stop", payload: { ...base, prompt_response: "scripted answer 1 " } }),
    ).toMatchObject({
      kind: "stop",
      answer: "scripted answer 1",
    });
    expect(
      geminiTui.signal({ event: "stop", payload: { ...base, prompt_response: "x" } }),
    ).not.toHaveProperty("interrupted");
  });

  it("a run cancelled with Escape is told by the recording's info record after its prompt", () => {
    const cancelled = recording("cancelled.jsonl", [
      head,
      user("write a story"),
      { id: "i1", type: "info", content: "Request cancelled." },
      { $set: { lastUpdated: "t" } },
    ]);
    const done = recording("done.jsonl", [
      head,
      user("write a story"),
      { id: "i1", type: "info", content: "Request cancelled." },
      user("say hi"),
      reply("r1", "scripted answer 2", 12, 7),
    ]);
    const stop = (file: string) =>
      geminiTui.signal({
        event: "stop",
        payload: { session_id: "s1", transcript_path: file, prompt_response: "x" },
      });
    expect(stop(cancelled)).toMatchObject({ kind: "stop", interrupted: true });
    expect(stop(done)).not.toHaveProperty("interrupted");
  });

  it("usage is the turn's part of the recording, each reply once; the answer its last reply", () => {
    const earlier = [head, user("say hi"), reply("r1", "scripted answer 1", 100, 50)];
    const file = recording("usage.jsonl", [
      ...earlier,
      user("make the file"),
      reply("r2", "", 20, 5),
      reply("r2", "", 20, 5),
      reply("r3", "The file out.txt now says hello.", 30, 9),
      { $set: { messages: [reply("r1", "scripted answer 1", 100, 50)] } },
    ]);
    const from = Buffer.byteLength(`${earlier.map((l) => JSON.stringify(l)).join("\n")}\n`);
    expect(geminiTui.transcript!(file, from)).toEqual({
      answer: "The file out.txt now says hello.",
      usage: { input: 50, output: 14 },
    });
    expect(geminiTui.transcript!(path.join(dir, "missing.jsonl"), 0)).toEqual({});
  });
});
