import { ENV } from "../../base/settings/table.js";
import { classifyText } from "../common/provider-error.js";
import {
  arr,
  binaryOf,
  cliPlan,
  jsonlParser,
  num,
  obj,
  passPrompt,
  splitModel,
  str,
  toolSummary,
} from "../common/shared.js";
import type { AgentMessage, Runner, SessionSpec, TurnInput, TurnPlan } from "../types.js";

const THINKING = ["off", "minimal", "low", "medium", "high", "xhigh"];

const textOf = (message: Record<string, unknown>): string =>
  arr(message.content)
    .map(obj)
    .filter((c) => c.type === "text")
    .map((c) => str(c.text) ?? "")
    .join("");

/** `pi --mode json` events → muster messages. */
export function piParser() {
  let last: Record<string, unknown> | undefined;
  let streamed = false;
  return jsonlParser((o): AgentMessage[] => {
    switch (o.type) {
      case "session":
        return str(o.id) ? [{ type: "session", id: o.id as string }] : [];
      case "message_update": {
        const e = obj(o.assistantMessageEvent);
        if (e.type !== "text_delta" || !str(e.delta)) return [];
        streamed = true;
        return [{ type: "text", text: e.delta as string }];
      }
      case "message_end": {
        const m = obj(o.message);
        if (m.role !== "assistant") return [];
        last = m;
        const u = obj(m.usage);
        const out: AgentMessage[] = [];
        if (streamed) out.push({ type: "text", text: "\n" });
        streamed = false;
        const cost = num(obj(u.cost).total);
        if (num(u.input) !== undefined || num(u.output) !== undefined) {
          const input = (num(u.input) ?? 0) + (num(u.cacheRead) ?? 0) + (num(u.cacheWrite) ?? 0);
          out.push({
            type: "usage",
            usage: { input, output: num(u.output) ?? 0, ...(cost ? { cost } : {}) },
          });
        }
        return out;
      }
      case "tool_execution_start":
        return [
          { type: "tool", phase: "start", name: str(o.toolName) ?? "tool", summary: toolSummary(o.args) },
        ];
      case "tool_execution_end": {
        const result = textOf(obj(o.result));
        const summary = o.isError ? `error: ${toolSummary(result)}` : "";
        return [{ type: "tool", phase: "end", name: str(o.toolName) ?? "tool", summary }];
      }
      case "auto_retry_start":
        return [
          {
            type: "progress",
            text: `${str(o.errorMessage) ?? "error"}: retry ${num(o.attempt) ?? "?"}/${num(o.maxAttempts) ?? "?"}`,
          },
        ];
      case "agent_end": {
        const m = last ?? {};
        const stop = str(m.stopReason);
        if (stop === "error" || stop === "aborted") {
          const reason = str(m.errorMessage) ?? `pi stopped: ${stop}`;
          // Pi words a provider error "<HTTP status> <provider's message>", with no structured field.
          const providerError = stop === "error" && str(m.errorMessage) ? classifyText(reason) : undefined;
          return [{ type: "result", status: "errored", reason, ...(providerError ? { providerError } : {}) }];
        }
        return [{ type: "result", status: "completed", text: textOf(m) }];
      }
    }
    return [];
  });
}

/** Pi coding agent, headless: `pi --mode json`. */
export const piRunner: Runner = {
  name: "pi",
  description: "Pi coding agent (`pi --mode json`); resumes with --session <id>",
  binary: {
    command: "pi",
    envVar: ENV.piBin,
    install: "npm install -g @mariozechner/pi-coding-agent",
    tested: { pkg: "@mariozechner/pi-coding-agent", version: "0.73.1" },
  },
  usage:
    "pi --mode json [--provider <p> --model <m>] [--thinking <r>] [--append-system-prompt <body>] [--tools <t,…>] [--session <id>] <prompt>",
  catalog: { provider: "pi", open: true, models: [], reasoning: THINKING },
  resumeMode: () => "native",
  ignores: ["disallowedTools", "maxTurns"],
  plan(input: TurnInput): TurnPlan {
    const { provider, id } = splitModel(input.model);
    // pi has no `--` and would read a prompt starting with "-" as an option: a leading space keeps it a message.
    const prompt = passPrompt(input, input.prompt, (p) => [p.startsWith("-") ? ` ${p}` : p]);
    const argv = [
      binaryOf(this.binary!, input.env),
      "--mode",
      "json",
      ...(provider && provider !== "pi" ? ["--provider", provider] : []),
      ...(id ? ["--model", id] : []),
      ...(input.reasoning ? ["--thinking", input.reasoning] : []),
      ...(input.systemPrompt?.trim() ? ["--append-system-prompt", input.systemPrompt.trim()] : []),
      ...(input.tools?.length ? ["--tools", input.tools.map((t) => t.toLowerCase()).join(",")] : []),
      ...(input.runnerSessionId ? ["--session", input.runnerSessionId] : []),
      ...prompt.args,
    ];
    // Settles on its `agent_end` record: its session is on disk by then (resume checked with the process killed right there).
    return { ...cliPlan(input, argv, piParser(), prompt), settleOnResult: true };
  },
  /** `pi --mode rpc`: one process for the child's life, a `prompt` command a turn (pi-rpc.ts). */
  session(input: TurnInput): SessionSpec {
    const { provider, id } = splitModel(input.model);
    return {
      protocol: "pi-rpc",
      argv: [
        binaryOf(this.binary!, input.env),
        "--mode",
        "rpc",
        ...(provider && provider !== "pi" ? ["--provider", provider] : []),
        ...(id ? ["--model", id] : []),
        ...(input.reasoning ? ["--thinking", input.reasoning] : []),
        ...(input.systemPrompt?.trim() ? ["--append-system-prompt", input.systemPrompt.trim()] : []),
        ...(input.tools?.length ? ["--tools", input.tools.map((t) => t.toLowerCase()).join(",")] : []),
      ],
      cwd: input.cwd,
      env: input.env,
      ...(input.runnerSessionId
        ? { resume: input.runnerSessionId, resumeArgs: ["--session", input.runnerSessionId] }
        : {}),
    };
  },
};
