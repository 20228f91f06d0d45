/**
 * Pi's interactive TUI as a muster child. Turn boundaries come from muster's Pi extension (`-e`,
 * pi-extension.ts): session_start (ready, its session id), before_agent_start (a prompt was submitted) and
 * agent_end (the turn's messages: the answer and usage come with it, no transcript read; a provider error ends
 * the last one with stopReason "error" and its errorMessage). Checked against the
 * pinned 0.73.1. Pi shows no start-up dialog with a configured model; none is looked for.
 */
import * as path from "node:path";
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { classifyText } from "../common/provider-error.js";
import { arr, binaryOf, num, obj, splitModel, str } from "../common/shared.js";
import { ownHookSignal } from "../tui/own-hooks.js";
import { inputBoxText } from "../tui/screen-text.js";
import type { HookLine, TuiAdapter, TuiFailure, TuiHooks, TuiLaunch, TuiSignal } from "../tui/types.js";
import type { RunnerBinary, TurnInput } from "../types.js";

const BINARY: RunnerBinary = {
  command: "pi",
  envVar: ENV.piBin,
  install: "npm install -g @mariozechner/pi-coding-agent",
};

/** The answer (the last assistant text) and usage (every assistant message) of one agent run. */
function ofMessages(messages: unknown[]): {
  answer?: string;
  usage?: Usage;
  interrupted?: boolean;
  failure?: TuiFailure;
} {
  let answer: string | undefined;
  let usage: Usage | undefined;
  let interrupted = false;
  let failure: TuiFailure | undefined;
  for (const m of messages.map(obj)) {
    if (m.role !== "assistant") continue;
    // Escape in Pi ends the run with an aborted message (agent_end still comes).
    interrupted = m.stopReason === "aborted";
    // A provider error ends it with an "error" message: "<HTTP status> <provider's message>", as headless.
    const error = m.stopReason === "error" ? (str(m.errorMessage) ?? "pi stopped: error") : undefined;
    const providerError = error ? classifyText(error) : undefined;
    failure = error ? { reason: error, ...(providerError ? { providerError } : {}) } : undefined;
    const text = arr(m.content)
      .map(obj)
      .filter((c) => c.type === "text")
      .map((c) => str(c.text) ?? "")
      .join("");
    if (text) answer = text;
    const u = obj(m.usage);
    if (num(u.input) === undefined && num(u.output) === undefined) continue;
    const input = (num(u.input) ?? 0) + (num(u.cacheRead) ?? 0) + (num(u.cacheWrite) ?? 0);
    const cost = num(obj(u.cost).total);
    usage = {
      input: (usage?.input ?? 0) + input,
      output: (usage?.output ?? 0) + (num(u.output) ?? 0),
      ...(cost || usage?.cost ? { cost: (usage?.cost ?? 0) + (cost ?? 0) } : {}),
    };
  }
  return {
    ...(answer !== undefined ? { answer } : {}),
    ...(usage ? { usage } : {}),
    ...(interrupted ? { interrupted } : {}),
    ...(failure ? { failure } : {}),
  };
}

export const piTui: TuiAdapter = {
  runner: "pi",
  interruptReportsEnd: true,
  hooks: "session_start, before_agent_start, agent_end, tool_execution_start/end (muster's extension, -e)",
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch {
    const { provider, id } = splitModel(input.model);
    return {
      argv: [
        binaryOf(BINARY, input.env),
        "-e",
        path.join(PACKAGE_ROOT, "dist", "runners", "tui", "pi-extension.js"),
        ...(provider && provider !== "pi" ? ["--provider", provider] : []),
        ...(id ? ["--model", id] : []),
        ...(input.reasoning ? ["--thinking", input.reasoning] : []),
        ...(input.systemPrompt?.trim() ? ["--append-system-prompt", input.systemPrompt.trim()] : []),
        ...(input.tools?.length ? ["--tools", input.tools.map((t) => t.toLowerCase()).join(",")] : []),
        ...(resume ? ["--session", resume] : []),
      ],
      cwd: input.cwd,
      // The extension finds the hook file here (Pi hands an extension no arguments).
      env: { ...input.env, [ENV.tuiHookFile]: hooks.file },
    };
  },
  signal(line: HookLine): TuiSignal | undefined {
    if (line.event !== "stop") return ownHookSignal(line);
    const p = obj(line.payload);
    const sessionId = str(p.session_id);
    return { kind: "stop", ...(sessionId ? { sessionId } : {}), ...ofMessages(arr(p.messages)) };
  },
  dialog(): string | undefined {
    return undefined;
  },
  draft: inputBoxText,
};
