/**
 * The Codex CLI's interactive TUI (plain `codex`) as a muster child. Turn boundaries come from Codex's own
 * lifecycle hooks, given per invocation (`-c hooks={…}`, nothing written to the user's config): SessionStart
 * (its session id and rollout file), UserPromptSubmit (a turn starts, whoever typed it), Stop (the turn ended,
 * with `last_assistant_message`), Interrupt (Escape ended it), Pre/PostToolUse and PermissionRequest. Usage
 * comes from the session's rollout file (`transcript_path`), and so does the error of a turn an API error ended
 * (it runs no Stop hook then). Checked against the pinned 0.171.0.
 *
 * Two things differ from Claude Code. Codex runs a hook only once a person trusted it (`/hooks`), and a
 * per-invocation hook cannot be trusted ahead: the TUI starts with `--dangerously-bypass-hook-trust`, which
 * also runs hooks the user enabled but never reviewed (their config layers; a project's own only in a folder
 * they trusted). And its SessionStart fires with the first prompt, not at start-up: the screen says when the
 * TUI can take one (`readyOnScreen`).
 */
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { shellWords } from "../../util/text.js";
import { binaryOf, num, obj, str } from "../common/shared.js";
import { hookRefs, startSignal, toolSignal } from "../tui/signals.js";
import { jsonRecords, readTranscript } from "../tui/transcript.js";
import type { HookLine, TuiAdapter, TuiFailure, TuiHooks, TuiLaunch, TuiSignal } from "../tui/types.js";
import type { RunnerBinary, TurnInput } from "../types.js";
import { codexProviderError } from "./app-server.js";
import { modelSettings, tomlString } from "./runner.js";

const BINARY: RunnerBinary = {
  command: "codex",
  envVar: ENV.codexBin,
  install: "npm install -g @openai/codex",
};

/** Codex hook event → the name muster's hook command records it under. */
const EVENTS: Record<string, string> = {
  SessionStart: "ready",
  UserPromptSubmit: "start",
  Stop: "stop",
  Interrupt: "interrupt",
  PreToolUse: "tool-start",
  PostToolUse: "tool-end",
  PermissionRequest: "permission",
};

/** The hooks as one TOML inline table for `-c hooks=…` (Codex runs each command through a shell). */
export function hooksToml(hooks: TuiHooks): string {
  const entry = (event: string) =>
    `[{hooks=[{type="command",command=${tomlString(shellWords(hooks.command(event)))}}]}]`;
  return `{${Object.entries(EVENTS)
    .map(([codex, ours]) => `${codex}=${entry(ours)}`)
    .join(",")}}`;
}

// What the pinned version shows before its prompt can take input (the line that names each one).
const DIALOGS = [
  /^Folder access$/,
  /Trust this folder\?/,
  /^Meet \S/,
  /Try new model/,
  /Sign in with ChatGPT/,
  /Provide your own API key/,
  /Welcome to Codex/,
  /enter continue · esc back/,
  /enter\/esc confirm/,
];

// The composer's placeholder texts (dim on screen, plain in the screen model): an empty box, not a draft.
const PLACEHOLDERS = [
  /^Ask Codex to do anything$/,
  /^Explain this codebase$/,
  /^Summarize recent commits$/,
  /^Implement \{feature\}$/,
  /^Find and fix a bug in @filename$/,
  /^Write tests for @filename$/,
  /^Improve documentation in @filename$/,
  /^Run \/review on my current changes$/,
  /^Use \/skills to list available skills$/,
];

const screenLines = (screen: string): string[] => screen.split("\n").map((l) => l.trimEnd());

/** The composer: from the last line that starts with `›` (earlier ones are prompts in the history) on. */
function composer(screen: string): string[] | undefined {
  const lines = screenLines(screen);
  let at = -1;
  for (let i = lines.length - 1; i >= 0; i--)
    if (lines[i]!.trimStart().startsWith("›")) {
      at = i;
      break;
    }
  if (at < 0) return undefined;
  // The box ends at the first blank line; the model/cwd status line comes after it.
  const end = lines.findIndex((l, i) => i > at && !l.trim());
  return lines.slice(at, end < 0 ? undefined : end).map((l) => l.trim());
}

export const codexTui: TuiAdapter = {
  runner: "codex",
  // Escape runs the Interrupt hook: the interrupted turn's end is reported.
  interruptReportsEnd: true,
  hooks:
    "SessionStart, UserPromptSubmit, Stop, Interrupt, PreToolUse, PostToolUse, PermissionRequest (-c hooks=…, --dangerously-bypass-hook-trust)",
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch {
    const system = input.systemPrompt?.trim();
    return {
      argv: [
        binaryOf(BINARY, input.env),
        // Hooks given per invocation cannot be trusted ahead (see the file's comment).
        "--dangerously-bypass-hook-trust",
        "-c",
        `hooks=${hooksToml(hooks)}`,
        // Keys typed fast (a person's line sent through tmux) stay keys, not a paste whose Enter is a newline.
        "-c",
        "disable_paste_burst=true",
        // As headless: commands run in the workspace-write sandbox; what needs more asks the person at the pane.
        "--sandbox",
        "workspace-write",
        "--ask-for-approval",
        "on-request",
        ...modelSettings(input),
        ...(system && !resume ? ["-c", `developer_instructions=${tomlString(system)}`] : []),
        ...(resume ? ["resume", resume] : []),
      ],
      cwd: input.cwd,
      env: input.env,
    };
  },
  signal(line: HookLine): TuiSignal | undefined {
    const p = obj(line.payload);
    const { sid, common } = hookRefs(p);
    switch (line.event) {
      case "ready":
        return { kind: "ready", ...common };
      case "start":
        return startSignal(p.prompt, common);
      case "tool-start":
      case "tool-end":
        // PostToolUse carries the output only (no exit status): an end says nothing more.
        return toolSignal(line.event, p.tool_name, p.tool_input, false, sid);
      case "permission":
        return { kind: "permission", ...sid };
      case "stop": {
        const answer = str(p.last_assistant_message);
        return { kind: "stop", ...common, ...(answer !== undefined ? { answer } : {}) };
      }
      case "interrupt":
        return { kind: "stop", ...common, interrupted: true };
      default:
        return undefined;
    }
  },
  transcript(file: string, fromByte: number): { answer?: string; usage?: Usage } {
    // One token_usage_record per model response (its id): a response's usage counts once.
    const seen = new Map<string, Usage>();
    let answer: string | undefined;
    for (const r of jsonRecords(readTranscript(file, fromByte))) {
      const p = obj(r.payload);
      if (r.type === "token_usage_record") {
        const u = obj(p.usage);
        seen.set(str(p.response_id) ?? `record${seen.size}`, {
          input: num(u.input_tokens) ?? 0,
          output: num(u.output_tokens) ?? 0,
        });
      } else if (r.type === "event_msg" && p.type === "task_complete") {
        answer = str(p.last_agent_message) ?? answer;
      }
    }
    if (seen.size === 0) return answer !== undefined ? { answer } : {};
    const usage = [...seen.values()].reduce((a, b) => ({
      input: a.input + b.input,
      output: a.output + b.output,
    }));
    return { ...(answer !== undefined ? { answer } : {}), usage };
  },
  failure(file: string, fromByte: number): TuiFailure | undefined {
    // A failed turn runs no Stop hook: the rollout's task_complete carries the error (codex_error_info names it).
    for (const r of jsonRecords(readTranscript(file, fromByte))) {
      const p = obj(r.payload);
      if (r.type !== "event_msg" || p.type !== "task_complete" || p.error == null) continue;
      const e = obj(p.error);
      const reason = str(e.message) ?? "the turn failed";
      const providerError = codexProviderError(e.codex_error_info, reason);
      return { reason, ...(providerError ? { providerError } : {}) };
    }
    return undefined;
  },
  interrupted(file: string, fromByte: number): boolean {
    // Should the Interrupt hook not come (a hook that failed), the rollout still says the turn was aborted.
    return jsonRecords(readTranscript(file, fromByte)).some(
      (r) => r.type === "event_msg" && obj(r.payload).type === "turn_aborted",
    );
  },
  dialog(screen: string): string | undefined {
    const lines = screenLines(screen)
      .map((l) => l.trim())
      .filter(Boolean);
    const at = lines.findIndex((l) => DIALOGS.some((d) => d.test(l)));
    if (at < 0) return undefined;
    // From the line that names it on: what a person must answer, not the banner above it.
    return lines.slice(at).join(" / ").slice(0, 600);
  },
  readyOnScreen(screen: string): boolean {
    const box = composer(screen);
    // A numbered choice under `›` is a dialog's selection, not the composer.
    if (!box || /^›\s*\d+\./.test(box[0]!) || this.dialog(screen)) return false;
    // Codex draws its composer while still loading, before a dialog (folder trust) covers it: only the footer
    // it shows once the session is set up ("<model> · <cwd>", "← for agents · ? for shortcuts") says ready.
    const lines = screenLines(screen);
    const at = lines.lastIndexOf(lines.findLast((l) => l.trimStart().startsWith("›")) ?? "");
    return lines.slice(at + box.length).some((l) => l.includes(" · "));
  },
  draft(screen: string): string {
    const box = composer(screen);
    if (!box || /^›\s*\d+\./.test(box[0]!)) return "";
    const text = [box[0]!.replace(/^›\s?/, ""), ...box.slice(1)].join("\n").trim();
    return PLACEHOLDERS.some((p) => p.test(text)) ? "" : text;
  },
};
