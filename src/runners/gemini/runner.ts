import * as path from "node:path";
import { ENV } from "../../base/settings/table.js";
import { writeFileNoFollow } from "../../util/fsx.js";
import { bodyCodes, classifyProvider, classifyText, type ProviderError } from "../common/provider-error.js";
import {
  binaryOf,
  cliPlan,
  jsonlParser,
  num,
  obj,
  passPrompt,
  runnerDir,
  splitModel,
  str,
  toolSummary,
  withInstructions,
} from "../common/shared.js";
import type { AgentMessage, Runner, SessionSpec, TurnInput, TurnPlan } from "../types.js";

/** `gemini --output-format stream-json` events → muster messages. */
export function geminiParser() {
  const toolNames = new Map<string, string>();
  // The answer is what the model said after its last tool call.
  let segment = "";
  return jsonlParser((o): AgentMessage[] => {
    switch (o.type) {
      case "init":
        return str(o.session_id) ? [{ type: "session", id: o.session_id as string }] : [];
      case "message":
        if (o.role !== "assistant" || !str(o.content)) return [];
        segment = o.delta ? segment + (o.content as string) : (o.content as string);
        return [{ type: "text", text: o.content as string }];
      case "tool_use": {
        const name = str(o.tool_name) ?? "tool";
        if (str(o.tool_id)) toolNames.set(o.tool_id as string, name);
        const newline: AgentMessage[] = segment ? [{ type: "text", text: "\n" }] : [];
        segment = "";
        return [...newline, { type: "tool", phase: "start", name, summary: toolSummary(o.parameters) }];
      }
      case "tool_result": {
        const name = toolNames.get(str(o.tool_id) ?? "") ?? "tool";
        const failed = o.status !== "success";
        const why = str(obj(o.error).message) ?? str(o.output) ?? "";
        return [{ type: "tool", phase: "end", name, summary: failed ? `error: ${toolSummary(why)}` : "" }];
      }
      case "error":
        return [{ type: "progress", text: str(o.message) ?? "error" }];
      case "result": {
        const stats = obj(o.stats);
        const out: AgentMessage[] = segment ? [{ type: "text", text: "\n" }] : [];
        if (num(stats.input_tokens) !== undefined || num(stats.output_tokens) !== undefined) {
          out.push({
            type: "usage",
            usage: { input: num(stats.input_tokens) ?? 0, output: num(stats.output_tokens) ?? 0 },
          });
        }
        if (o.status === "success") out.push({ type: "result", status: "completed", text: segment });
        else {
          const e = obj(o.error);
          const reason = str(e.message) ?? `gemini: ${str(o.status) ?? "error"}`;
          const providerError = geminiProviderError(reason);
          out.push({
            type: "result",
            status: "errored",
            reason,
            ...(providerError ? { providerError } : {}),
          });
        }
        return out;
      }
    }
    return [];
  });
}

/**
 * Gemini CLI's stream-json error (`type: "unknown"` always) is its own wording around the API's:
 * `[API Error: <message or the API's JSON error body>]`. A JSON body is read for its status and reasons
 * (API_KEY_INVALID, RESOURCE_EXHAUSTED); otherwise its fixed phrases say which ("exhausted your daily quota",
 * "Suggested retry after 20s.").
 */
export function geminiProviderError(message: string): ProviderError | undefined {
  const inner = /^\[API Error: ([\s\S]*)\]/.exec(message)?.[1];
  if (inner?.trimStart().startsWith("{")) {
    const { codes } = bodyCodes(inner);
    let status: number | undefined;
    try {
      const code = (JSON.parse(inner) as { error?: { code?: unknown } }).error?.code;
      if (typeof code === "number") status = code;
    } catch {
      // Not JSON after all: the phrases below decide.
    }
    const found = classifyProvider({ ...(status !== undefined ? { status } : {}), codes, message });
    if (found) return found;
  }
  return classifyText(message);
}

/** Tool narrowing for gemini lives in settings: a per-child system settings file (the user's files stay as they are). */
function toolSettings(input: TurnInput): Record<string, string> {
  if (!input.tools?.length && !input.disallowedTools?.length) return {};
  const file = path.join(runnerDir(input), "gemini-settings.json");
  const tools = {
    ...(input.tools?.length ? { core: input.tools } : {}),
    ...(input.disallowedTools?.length ? { exclude: input.disallowedTools } : {}),
    // permissions: ask: the profile's tools still run without a confirmation, as with the other CLIs.
    ...(input.permissions === "ask" && input.tools?.length ? { allowed: input.tools } : {}),
  };
  // In the child's own folder: a symlink planted there is replaced, never written through.
  writeFileNoFollow(file, `${JSON.stringify({ tools }, null, 2)}\n`);
  return { GEMINI_CLI_SYSTEM_SETTINGS_PATH: file };
}

/** yolo (no one to confirm a tool), unless the profile asks: then gemini's default mode confirms each tool. */
const approvalMode = (input: TurnInput): string => (input.permissions === "ask" ? "default" : "yolo");

/** Gemini CLI, headless: `gemini --output-format stream-json --prompt=<prompt>`. */
export const geminiRunner: Runner = {
  name: "gemini",
  description: "Gemini CLI (`gemini -p`, stream-json); resumes with --resume <session>",
  binary: {
    command: "gemini",
    envVar: ENV.geminiBin,
    install: "npm install -g @google/gemini-cli",
    tested: { pkg: "@google/gemini-cli", version: "0.61.0" },
  },
  usage:
    "gemini --output-format stream-json --approval-mode yolo --skip-trust [-m <m>] [--resume <session>] --prompt=<prompt>",
  catalog: {
    provider: "google",
    open: true,
    reasoning: [],
    // The CLI has no reasoning flag: levels are not offered.
    models: ["gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-3-pro-preview"].map(
      (m) => ({
        id: `google:${m}`,
        reasoning: [],
      }),
    ),
  },
  resumeMode: () => "native",
  ignores: ["maxTurns"],
  routesPermissions: true,
  plan(input: TurnInput): TurnPlan {
    const { id } = splitModel(input.model);
    // One word with `=`: a prompt starting with "-" is never read as an option. A large one goes by stdin,
    // which gemini puts ahead of an (empty) --prompt.
    const prompt = passPrompt(input, withInstructions(input), (p) => [`--prompt=${p}`], ["--prompt="]);
    const argv = [
      binaryOf(this.binary!, input.env),
      "--output-format",
      "stream-json",
      // Headless: nothing can answer a confirmation, so tools run without one (narrow them with the profile's tools).
      "--approval-mode",
      approvalMode(input),
      // The parent chose this cwd for the child; without it, folder trust refuses a headless run (exit 55).
      "--skip-trust",
      ...(id ? ["-m", id] : []),
      ...(input.runnerSessionId ? ["--resume", input.runnerSessionId] : []),
      ...prompt.args,
    ];
    const env = { ...input.env, ...toolSettings(input) };
    // Settles on its `result` record: its session is on disk by then (resume checked with the process killed right there).
    return { ...cliPlan(input, argv, geminiParser(), prompt, env), settleOnResult: true };
  },
  /** `gemini --acp`: one process for the child's life; yolo, or (`permissions: ask`) each confirmation an ACP
   * `session/request_permission` the parent answers. */
  session(input: TurnInput): SessionSpec {
    const { id } = splitModel(input.model);
    return {
      protocol: "acp",
      argv: [
        binaryOf(this.binary!, input.env),
        "--acp",
        "--approval-mode",
        approvalMode(input),
        "--skip-trust",
        ...(id ? ["-m", id] : []),
      ],
      cwd: input.cwd,
      env: { ...input.env, ...toolSettings(input) },
      ...(input.runnerSessionId ? { resume: input.runnerSessionId } : {}),
      ...(input.systemPrompt?.trim() ? { preamble: input.systemPrompt.trim() } : {}),
      // gemini 0.61's session/load answers "No previous sessions found for this project" for a session an
      // earlier --acp process wrote; the turn after a restart resumes it headless (--resume) instead.
      reloads: false,
    };
  },
};
