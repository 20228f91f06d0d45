/**
 * Gemini CLI's interactive TUI as a muster child. Turn boundaries come from hooks in a per-child system
 * settings file (`GEMINI_CLI_SYSTEM_SETTINGS_PATH=<runner>/tui-settings.json`; hooks from every settings layer
 * are concatenated, so the user's own hooks and settings still apply): SessionStart (the TUI is up, its session
 * id), BeforeAgent (a turn starts, whoever typed it), AfterAgent (the turn ended, with `prompt_response`),
 * BeforeTool/AfterTool and Notification (ToolPermission). Usage comes from the session's chat recording
 * (`transcript_path`, JSONL: one `gemini` record per model reply with `tokens`). A profile's instructions go in
 * as a SessionStart hook's additionalContext (gemini-context.ts). Checked against the pinned 0.61.0.
 *
 * Gemini reads a system settings file only when neither it nor any folder above it is writable by group or
 * others (a runner folder under /tmp is skipped with a "Security Warning" on screen): that warning is reported
 * like a start-up dialog, since no hook will ever come.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { writeFileNoFollow } from "../../util/fsx.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { shellWords } from "../../util/text.js";
import { binaryOf, num, obj, splitModel, str } from "../common/shared.js";
import { hookRefs, startSignal, toolSignal } from "../tui/signals.js";
import { jsonRecords, readTranscript } from "../tui/transcript.js";
import type {
  HookLine,
  StopChoice,
  TuiAdapter,
  TuiFailure,
  TuiHooks,
  TuiLaunch,
  TuiSignal,
} from "../tui/types.js";
import type { RunnerBinary, TurnInput } from "../types.js";
import { geminiProviderError } from "./runner.js";

const BINARY: RunnerBinary = {
  command: "gemini",
  envVar: ENV.geminiBin,
  install: "npm install -g @google/gemini-cli",
};

/** Gemini runs a hook's `command` through a shell, like Claude Code: our argv words, each quoted. */
const hook = (hooks: TuiHooks, event: string) => [
  { hooks: [{ type: "command", name: `muster-${event}`, command: shellWords(hooks.command(event)) }] },
];

// What the pinned version shows before its prompt can take input (first lines that name each one).
const DIALOGS = [
  /Security Warning: Skipping system settings file/,
  /Do you trust the files in this folder/,
  /How would you like to authenticate/,
  /Waiting for authentication/,
  /Select Theme/,
];

/**
 * The headlines of Gemini's menus after a provider refused a request (ProQuotaDialog, OverageMenuDialog,
 * EmptyWalletDialog in 0.61): each waits for a person, and each has a numbered "Stop" that ends the request.
 */
const QUOTA_MENUS = [
  /^Usage limit reached for .+/,
  /^We are currently experiencing high demand.*/,
  /^It seems like you don't have access to .+/,
  /^Model ".+" (?:was not found or is invalid|is not available in region .+)/,
];
/** A menu's numbered stop item: `2. Stop`, `● 3. Stop - Abort request`. */
const STOP_ITEM = /^\s*(?:[●○◉>❯]\s*)?(\d)\.\s+(Stop\b.*)$/;

/** How long a resumed TUI takes to load its history after SessionStart (measured: 0.5-1.5 s), with room to spare. */
const RESUME_SETTLE_MS = 3000;

/** The recording's message records (its `$set` rewrites of the whole history are skipped). */
function records(text: string): Record<string, unknown>[] {
  return jsonRecords(text).filter((o) => typeof o.type === "string");
}

/**
 * Whether the last run in the recording was cancelled (Escape): gemini still runs AfterAgent then, with the
 * partial reply; only the recording tells, by an info record "Request cancelled." after the run's prompt.
 */
function cancelled(file: string | undefined): boolean {
  if (!file) return false;
  const recs = records(readTranscript(file, 0, 256 * 1024));
  const lastUser = recs.findLastIndex((r) => r.type === "user");
  return recs
    .slice(lastUser + 1)
    .some((r) => r.type === "info" && /^Request cancelled/.test(str(r.content) ?? ""));
}

/**
 * The API error that ended the last run in the recording: gemini runs AfterAgent then too (its reply "[no response
 * text]"); the recording's last record after the run's prompt is an `error` one, in gemini's words
 * ("[API Error: You have exhausted your daily quota on this model.]").
 */
function failedRun(file: string | undefined): TuiFailure | undefined {
  if (!file) return undefined;
  const recs = records(readTranscript(file, 0, 256 * 1024));
  const lastUser = recs.findLastIndex((r) => r.type === "user");
  const last = recs.slice(lastUser + 1).findLast((r) => r.type === "gemini" || r.type === "error");
  const reason = last?.type === "error" ? str(last.content) : undefined;
  if (!reason) return undefined;
  // The same words as its stream-json error: read as the headless runner reads them.
  const providerError = geminiProviderError(reason);
  return { reason, ...(providerError ? { providerError } : {}) };
}

/** Tool narrowing, as the headless runner does it (settings `tools.core` / `tools.exclude`). */
function toolSettings(input: TurnInput): Record<string, unknown> {
  if (!input.tools?.length && !input.disallowedTools?.length) return {};
  return {
    tools: {
      ...(input.tools?.length ? { core: input.tools } : {}),
      ...(input.disallowedTools?.length ? { exclude: input.disallowedTools } : {}),
      ...(input.permissions === "ask" && input.tools?.length ? { allowed: input.tools } : {}),
    },
  };
}

/**
 * SessionStart: the ready record, and with the profile's instructions a hook before it that hands them over
 * (gemini-context.ts): gemini has no system-prompt flag; a SessionStart hook's additionalContext is the first
 * turn of an interactive session.
 */
function sessionStart(input: TurnInput, hooks: TuiHooks) {
  const text = input.systemPrompt?.trim();
  if (!text) return hook(hooks, "ready");
  const file = path.join(input.runnerDir, "tui-instructions.md");
  writeFileNoFollow(file, text);
  const script = path.join(PACKAGE_ROOT, "dist", "runners", "tui", "gemini-context.js");
  // In order, the ready record last; gemini then adds the context turn to its screen, which may drop keys (as
  // on a resume): that record asks for a moment before the paste ("ready-settle").
  const context = {
    type: "command",
    name: "muster-instructions",
    command: shellWords([process.execPath, script, file]),
  };
  return [{ sequential: true, hooks: [context, ...hook(hooks, "ready-settle")[0]!.hooks] }];
}

export const geminiTui: TuiAdapter = {
  runner: "gemini",
  // Escape: gemini cancels the request and still runs AfterAgent (the recording says it was cancelled).
  interruptReportsEnd: true,
  hooks:
    "SessionStart, BeforeAgent, AfterAgent, BeforeTool, AfterTool, Notification (GEMINI_CLI_SYSTEM_SETTINGS_PATH)",
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch {
    fs.mkdirSync(input.runnerDir, { recursive: true, mode: 0o700 });
    const settings = path.join(input.runnerDir, "tui-settings.json");
    // In the child's own folder: a symlink planted there is replaced, never written through.
    writeFileNoFollow(
      settings,
      `${JSON.stringify({
        ...toolSettings(input),
        hooks: {
          SessionStart: sessionStart(input, hooks),
          BeforeAgent: hook(hooks, "start"),
          AfterAgent: hook(hooks, "stop"),
          // Every tool (an empty matcher matches all): the turn's tool_activity, and a sign of life.
          BeforeTool: [{ matcher: "", ...hook(hooks, "tool-start")[0] }],
          AfterTool: [{ matcher: "", ...hook(hooks, "tool-end")[0] }],
          // ToolPermission: the TUI waits for a person to allow the tool it is about to run.
          Notification: hook(hooks, "notification"),
        },
      })}\n`,
    );
    const { id } = splitModel(input.model);
    return {
      argv: [
        binaryOf(BINARY, input.env),
        // A turn muster sent must finish with nobody at the pane (as headless): yolo, unless the profile asks.
        "--approval-mode",
        input.permissions === "ask" ? "default" : "yolo",
        // The parent chose this cwd for the child (as headless): no folder-trust dialog in the way.
        "--skip-trust",
        ...(id ? ["-m", id] : []),
        ...(resume ? ["--resume", resume] : []),
      ],
      cwd: input.cwd,
      env: { ...input.env, GEMINI_CLI_SYSTEM_SETTINGS_PATH: settings },
    };
  },
  signal(line: HookLine): TuiSignal | undefined {
    const p = obj(line.payload);
    const { sid, common } = hookRefs(p);
    // On a resume, gemini loads the history into its screen after SessionStart and drops keys until then.
    if (line.event === "ready" || line.event === "ready-settle") {
      const settle = p.source === "resume" || line.event === "ready-settle";
      return { kind: "ready", ...common, ...(settle ? { settleMs: RESUME_SETTLE_MS } : {}) };
    }
    if (line.event === "start") return startSignal(p.prompt, common);
    if (line.event === "tool-start" || line.event === "tool-end") {
      const failed = line.event === "tool-end" && obj(p.tool_response).error != null;
      return toolSignal(line.event, p.tool_name, p.tool_input, failed, sid);
    }
    if (line.event === "notification")
      return p.notification_type === "ToolPermission" ? { kind: "permission", ...sid } : undefined;
    if (line.event === "stop") {
      // The hook's reply ends with a space gemini adds between streamed parts.
      const answer = str(p.prompt_response)?.trim();
      const failure = failedRun(common.transcript);
      return {
        kind: "stop",
        ...common,
        ...(failure ? { failure } : {}),
        ...(answer !== undefined ? { answer } : {}),
        ...(cancelled(common.transcript) ? { interrupted: true } : {}),
      };
    }
    return undefined;
  },
  transcript(file: string, fromByte: number): { answer?: string; usage?: Usage } {
    // A reply may be recorded again with the same id (an update): its tokens count once.
    const seen = new Map<string, Usage>();
    let answer: string | undefined;
    for (const r of records(readTranscript(file, fromByte))) {
      if (r.type !== "gemini") continue;
      const t = obj(r.tokens);
      seen.set(str(r.id) ?? `rec${seen.size}`, { input: num(t.input) ?? 0, output: num(t.output) ?? 0 });
      if (str(r.content)) answer = str(r.content);
    }
    if (seen.size === 0) return answer !== undefined ? { answer } : {};
    const usage = [...seen.values()].reduce((a, b) => ({
      input: a.input + b.input,
      output: a.output + b.output,
    }));
    return { ...(answer !== undefined ? { answer } : {}), usage };
  },
  dialog(screen: string): string | undefined {
    const lines = screen
      .split("\n")
      .map((l) => l.replace(/^[\s│╭╰]+|[\s│╮╯]+$/g, ""))
      .filter((l) => l && !/^[─━]+$/.test(l));
    const at = lines.findIndex((l) => DIALOGS.some((d) => d.test(l)));
    return at < 0 ? undefined : lines.slice(at).join(" / ").slice(0, 600);
  },
  stopChoice(screen: string): StopChoice | undefined {
    // The menu is a round box: its rows start with │ (an answer's text never does), its headline first.
    const rows = screen.split("\n").map((l) => {
      const inBox = /^\s*│/.test(l);
      return { inBox, text: l.replace(/^[\s│]+|[\s│]+$/g, "") };
    });
    const at = rows.findLastIndex((r) => r.inBox && QUOTA_MENUS.some((m) => m.test(r.text)));
    if (at < 0) return undefined;
    for (const r of rows.slice(at + 1)) {
      if (!r.inBox) break;
      const item = STOP_ITEM.exec(r.text);
      if (item) return { says: rows[at]!.text, choice: item[2]!.trim(), keys: item[1]! };
    }
    return undefined;
  },
  draft(screen: string): string {
    // Gemini's input line: a mode marker (`>`, `*` in YOLO, `!` in shell mode) then the draft or a placeholder.
    // It is the last such line on screen (prompts in the history above look alike); rules around it vary with
    // the width, so they are not looked for.
    const line = screen
      .split("\n")
      .map((l) => /^\s*[>*!]\s+(.*)$/.exec(l)?.[1]?.trim())
      .findLast((t) => t !== undefined);
    return !line || /^Type your message or @path\/to\/file$/.test(line) ? "" : line;
  },
};
