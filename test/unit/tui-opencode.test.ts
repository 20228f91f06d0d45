// OpenCode in mode tui, the parts that need no CLI: muster's plugin fed OpenCode 1.18.33's hook calls
// and events (as captured from the pinned TUI), the adapter reading its records and its screen, and the per-child
// config it starts the TUI with.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { opencodeTui } from "../../src/runners/opencode/tui.js";
import { MusterTuiHooks } from "../../src/runners/tui/opencode-plugin.js";
import type { HookLine } from "../../src/runners/tui/types.js";

const BOTTOM = `╹${"▀".repeat(80)}`;
// Screens as captured from the pinned TUI in tmux (trimmed of blank rows).
const STARTING = ["", "", ""].join("\n");
const EMPTY_BOX = [
  "  █▀▀█ █▀▀█ █▀▀█ █▀▀▄ █▀▀▀ █▀▀█ █▀▀█ █▀▀█",
  "  ┃",
  '  ┃  Ask anything… "Fix a TODO in the codebase"',
  "  ┃",
  "  ┃  Build · scripted scripted",
  `  ${BOTTOM}`,
  "                   tab agents  ctrl+p commands",
].join("\n");
const AFTER_ANSWER = [
  "  ┃",
  "  ┃  say hi",
  "  ┃",
  "     scripted answer 2",
  "     ▣  Build · scripted · 227ms",
  "  ┃",
  "  ┃",
  "  ┃",
  "  ┃  Build · scripted scripted",
  `  ${BOTTOM}`,
].join("\n");
const DRAFT = [
  "     scripted answer 2",
  "  ┃",
  "  ┃  what was the word?",
  "  ┃",
  "  ┃  Build · scripted scripted",
  `  ${BOTTOM}`,
].join("\n");

const SID = "ses_dd1579145ffeaHGbTOKo9kBZO5";
const assistant = (id: string, extra: Record<string, unknown> = {}) => ({
  type: "message.updated",
  properties: {
    sessionID: SID,
    info: {
      id,
      role: "assistant",
      sessionID: SID,
      cost: 0,
      tokens: { input: 12, output: 7, reasoning: 0, cache: { read: 3, write: 0 } },
      ...extra,
    },
  },
});
const text = (id: string, messageID: string, t: string) => ({
  type: "message.part.updated",
  properties: { sessionID: SID, part: { id, messageID, sessionID: SID, type: "text", text: t } },
});

describe("OpenCode's mode tui: plugin and adapter", () => {
  let dir: string;
  let file: string;
  const lines = (): HookLine[] =>
    fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-oc-"));
    file = path.join(dir, "tui-hooks.ndjson");
    process.env.MUSTER_TUI_HOOK_FILE = file;
  });
  afterEach(() => {
    delete process.env.MUSTER_TUI_HOOK_FILE;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("a run of the main session: start with the prompt, stop with the last answer and every message's usage", async () => {
    const h = await MusterTuiHooks();
    await h["chat.message"](
      { sessionID: SID },
      {
        parts: [
          { type: "text", text: "say hi" },
          { type: "text", text: "hidden", synthetic: true },
        ],
      },
    );
    await h.event({ event: assistant("msg_a") });
    await h.event({ event: text("prt_1", "msg_a", "let me look") });
    await h.event({ event: assistant("msg_b") });
    await h.event({ event: text("prt_2", "msg_b", "scripted answer 2") });
    await h.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    const signals = lines().map((l) => opencodeTui.signal(l));
    expect(signals).toEqual([
      { kind: "start", sessionId: SID, prompt: "say hi" },
      { kind: "stop", sessionId: SID, answer: "scripted answer 2", usage: { input: 30, output: 14 } },
    ]);
  });

  it("Escape in the TUI: session.error (aborted) comes before idle, so the stop says interrupted", async () => {
    const h = await MusterTuiHooks();
    await h["chat.message"]({ sessionID: SID }, { parts: [{ type: "text", text: "story" }] });
    await h.event({ event: assistant("msg_a") });
    await h.event({
      event: {
        type: "session.error",
        properties: { sessionID: SID, error: { name: "MessageAbortedError", data: { message: "Aborted" } } },
      },
    });
    await h.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    expect(opencodeTui.signal(lines().at(-1)!)).toMatchObject({ kind: "stop", interrupted: true });
  });

  it("a subagent's session (it has a parent) and a session with no run are not muster's turns", async () => {
    const h = await MusterTuiHooks();
    await h.event({
      event: { type: "session.created", properties: { info: { id: "ses_child", parentID: SID } } },
    });
    await h["chat.message"]({ sessionID: "ses_child" }, { parts: [{ type: "text", text: "sub task" }] });
    await h.event({ event: { type: "session.idle", properties: { sessionID: "ses_child" } } });
    await h.event({ event: { type: "session.idle", properties: { sessionID: SID } } });
    expect(fs.existsSync(file)).toBe(false);
  });

  it("tool calls and a permission prompt of the run become tool and permission signals", async () => {
    const h = await MusterTuiHooks();
    await h["chat.message"]({ sessionID: SID }, { parts: [{ type: "text", text: "perm it" }] });
    await h["tool.execute.before"](
      { tool: "bash", sessionID: SID, callID: "call_1" },
      { args: { command: "echo hi > perm.txt" } },
    );
    await h.event({
      event: { type: "permission.asked", properties: { sessionID: SID, permission: "bash" } },
    });
    await h["tool.execute.after"]({ tool: "bash", sessionID: SID }, { metadata: {} });
    const [, start, perm, end] = lines().map((l) => opencodeTui.signal(l));
    expect(start).toMatchObject({ kind: "tool", phase: "start", name: "bash" });
    expect((start as { summary: string }).summary).toContain("echo hi > perm.txt");
    expect(perm).toEqual({ kind: "permission", sessionId: SID });
    expect(end).toEqual({ kind: "tool", phase: "end", name: "bash", summary: "" });
  });

  it("ready is read off the screen (the input box drawn); the draft is the box's text, not its placeholder", () => {
    expect(opencodeTui.readyOnScreen!(STARTING)).toBe(false);
    expect(opencodeTui.readyOnScreen!(EMPTY_BOX)).toBe(true);
    expect(opencodeTui.draft(EMPTY_BOX)).toBe("");
    expect(opencodeTui.draft(AFTER_ANSWER)).toBe("");
    expect(opencodeTui.draft(DRAFT)).toBe("what was the word?");
    expect(opencodeTui.dialog(EMPTY_BOX)).toBeUndefined();
  });

  it("starts `opencode <cwd>` with muster's plugin added to the user's config, resuming with --session", () => {
    const runnerDir = path.join(dir, "runner");
    const launch = opencodeTui.launch(
      {
        turnId: "t1",
        prompt: "hi",
        promptFile: path.join(dir, "p"),
        cwd: dir,
        runnerDir,
        model: "local:scripted",
        systemPrompt: "Be brief.",
        env: { OPENCODE_CONFIG_CONTENT: JSON.stringify({ plugin: ["user-plugin"], theme: "x" }) },
      },
      { file, command: (e) => ["node", "hook.js", file, e] },
      SID,
    );
    expect(launch.argv.slice(1)).toEqual(["-m", "local/scripted", "--session", SID, dir]);
    const config = JSON.parse(launch.env.OPENCODE_CONFIG_CONTENT!);
    expect(config.theme).toBe("x");
    expect(config.plugin[0]).toBe("user-plugin");
    expect(config.plugin[1]).toMatch(/^file:\/\/.*\/dist\/runners\/tui\/opencode-plugin\.js$/);
    expect(fs.readFileSync(config.instructions[0], "utf8").trim()).toBe("Be brief.");
    expect(launch.env.MUSTER_TUI_HOOK_FILE).toBe(file);
  });
});
