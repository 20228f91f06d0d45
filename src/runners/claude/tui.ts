/**
 * Claude Code's interactive TUI as a muster child. Turn boundaries come from hooks in a per-child settings
 * file (`--settings <runner>/tui-settings.json`): SessionStart (the TUI is up, its session id),
 * UserPromptSubmit (a turn starts, whoever typed it) and Stop (the turn ended, with `last_assistant_message`), or
 * StopFailure instead when an API error ended it (its kind in `error`).
 * Usage comes from the session's transcript (`transcript_path` in every hook's payload). Checked against the
 * pinned 2.1.332.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { shellWords } from "../../util/text.js";
import { classifyProvider } from "../common/provider-error.js";
import { arr, binaryOf, num, obj, splitModel, str } from "../common/shared.js";
import { inputBoxText } from "../tui/screen-text.js";
import { hookRefs, startSignal, toolSignal } from "../tui/signals.js";
import { jsonRecords, readTranscript } from "../tui/transcript.js";
import type { HookLine, TuiAdapter, TuiHooks, TuiLaunch, TuiSignal } from "../tui/types.js";
import type { RunnerBinary, TurnInput } from "../types.js";

const BINARY: RunnerBinary = {
  command: "claude",
  envVar: ENV.claudeBin,
  install: "npm install -g @anthropic-ai/claude-code",
};

// Claude Code runs a hook's `command` through a shell: shellWords keeps each word of our own argv (node,
// hook.js, the hook file, the event name) one word.
const hook = (hooks: TuiHooks, event: string) => [
  { hooks: [{ type: "command", command: shellWords(hooks.command(event)) }] },
];

// What the pinned version shows before its prompt can take input (first lines that name each one).
const DIALOGS = [
  /Is this a project you created or one you trust/,
  /Do you trust the files in this folder/,
  /Detected a custom API key in your environment/,
  /Choose the text style/,
  /Unable to connect to Anthropic services/,
  /Select login method/,
  /Enter to confirm · Esc to cancel/,
];

/**
 * The status and error types of Claude Code's synthetic API error message (`isApiErrorMessage`), when it is the
 * transcript's last assistant record: the run the StopFailure hook just ended. None for an error it does not
 * record there (a refused key).
 */
function apiErrorRecord(file: string | undefined): { status?: number; codes?: (string | undefined)[] } {
  if (!file) return {};
  const last = jsonRecords(readTranscript(file, 0, 256 * 1024)).findLast((r) => r.type === "assistant");
  if (last?.isApiErrorMessage !== true) return {};
  const status = num(last.apiErrorStatus);
  return { ...(status !== undefined ? { status } : {}), codes: [str(last.error), str(last.apiErrorType)] };
}

export const claudeTui: TuiAdapter = {
  runner: "claude",
  interruptReportsEnd: false,
  hooks:
    "SessionStart, UserPromptSubmit, Stop, StopFailure, PreToolUse, PostToolUse, Notification (--settings)",
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch {
    fs.mkdirSync(input.runnerDir, { recursive: true, mode: 0o700 });
    const settings = path.join(input.runnerDir, "tui-settings.json");
    writeFileAtomic(
      settings,
      `${JSON.stringify({
        hooks: {
          SessionStart: hook(hooks, "ready"),
          UserPromptSubmit: hook(hooks, "start"),
          Stop: hook(hooks, "stop"),
          // Instead of Stop when an API error (quota, rate limit, auth, overloaded) ended the turn.
          StopFailure: hook(hooks, "stop-failure"),
          // Every tool (an empty matcher matches all): the turn's tool_activity, and a sign of life.
          PreToolUse: [{ matcher: "", ...hook(hooks, "tool-start")[0] }],
          PostToolUse: [{ matcher: "", ...hook(hooks, "tool-end")[0] }],
          // permission_prompt: the TUI waits for a person to allow the tool it is about to run.
          Notification: hook(hooks, "notification"),
        },
      })}\n`,
    );
    const { id } = splitModel(input.model);
    const allowed = input.tools && input.tools.length > 0 ? input.tools : ["Bash"];
    // A turn muster sent must finish with nobody at the pane: edits accepted, the profile's tools pre-approved
    // (as headless); anything else still asks in the TUI, where a person can answer.
    return {
      argv: [
        binaryOf(BINARY, input.env),
        "--settings",
        settings,
        "--permission-mode",
        "acceptEdits",
        "--allowedTools",
        allowed.join(","),
        ...(input.disallowedTools?.length ? ["--disallowedTools", input.disallowedTools.join(",")] : []),
        ...(id ? ["--model", id] : []),
        ...(input.reasoning ? ["--effort", input.reasoning] : []),
        ...(input.systemPrompt?.trim() ? ["--append-system-prompt", input.systemPrompt.trim()] : []),
        ...(resume ? ["--resume", resume] : []),
      ],
      cwd: input.cwd,
      env: input.env,
    };
  },
  signal(line: HookLine): TuiSignal | undefined {
    const p = obj(line.payload);
    const { sid, common } = hookRefs(p);
    if (line.event === "ready") return { kind: "ready", ...common };
    if (line.event === "start") return startSignal(p.prompt, common);
    if (line.event === "tool-start" || line.event === "tool-end") {
      const failed = line.event === "tool-end" && obj(p.tool_response).is_error === true;
      return toolSignal(line.event, p.tool_name, p.tool_input, failed, sid);
    }
    if (line.event === "notification")
      return p.notification_type === "permission_prompt" ? { kind: "permission", ...sid } : undefined;
    if (line.event === "stop") {
      const answer = str(p.last_assistant_message);
      return { kind: "stop", ...common, ...(answer !== undefined ? { answer } : {}) };
    }
    if (line.event === "stop-failure") {
      // `error` is Claude Code's own name for what ended the turn (billing_error, rate_limit,
      // authentication_failed, server_error, …); the last message is what the TUI showed for it. A 529 is
      // "server_error" there: the transcript's API error record has the status and the provider's type.
      const code = str(p.error);
      const reason = str(p.last_assistant_message) ?? str(p.error_details) ?? code ?? "API error";
      const rec = apiErrorRecord(common.transcript);
      const providerError = classifyProvider({
        ...rec,
        codes: [code, ...(rec.codes ?? [])],
        message: reason,
      });
      return { kind: "stop", ...common, failure: { reason, ...(providerError ? { providerError } : {}) } };
    }
    return undefined;
  },
  transcript(file: string, fromByte: number): { answer?: string; usage?: Usage } {
    const text = readTranscript(file, fromByte);
    // A streamed message may be written more than once with the same id: its usage counts once.
    const seen = new Map<string, Usage>();
    let answer: string | undefined;
    for (const l of text.split("\n")) {
      let o: Record<string, unknown>;
      try {
        o = obj(JSON.parse(l));
      } catch {
        continue;
      }
      if (o.type !== "assistant" || o.isSidechain === true) continue;
      const m = obj(o.message);
      const u = obj(m.usage);
      const input =
        (num(u.input_tokens) ?? 0) +
        (num(u.cache_read_input_tokens) ?? 0) +
        (num(u.cache_creation_input_tokens) ?? 0);
      seen.set(str(m.id) ?? `line${seen.size}`, { input, output: num(u.output_tokens) ?? 0 });
      const said = arr(m.content)
        .map(obj)
        .filter((c) => c.type === "text")
        .map((c) => str(c.text) ?? "")
        .join("");
      if (said) answer = said;
    }
    if (seen.size === 0) return answer !== undefined ? { answer } : {};
    const usage = [...seen.values()].reduce((a, b) => ({
      input: a.input + b.input,
      output: a.output + b.output,
    }));
    return { ...(answer !== undefined ? { answer } : {}), usage };
  },
  interrupted(file: string, fromByte: number): boolean {
    // Escape in Claude Code runs no Stop hook; the transcript gets this user record instead.
    return readTranscript(file, fromByte).includes("[Request interrupted by user");
  },
  dialog(screen: string): string | undefined {
    const lines = screen
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !/^[─━]+$/.test(l));
    // From the line that names the dialog on: what a person must answer, not the banner above it.
    const at = lines.findIndex((l) => DIALOGS.some((d) => d.test(l)));
    return at < 0 ? undefined : lines.slice(at).join(" / ").slice(0, 600);
  },
  draft: inputBoxText,
};
