import { ENV } from "../../base/settings/table.js";
import { classifyText } from "../common/provider-error.js";
import { schemaFile, strictSchema } from "../common/schema.js";
import {
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
import type { CodexThread } from "./app-server.js";

const EFFORT = ["minimal", "low", "medium", "high", "xhigh"];

// Item types that are tool activity, with the name muster shows for them.
const TOOL_ITEMS: Record<string, string> = {
  command_execution: "shell",
  file_change: "edit",
  mcp_tool_call: "mcp",
  web_search: "web_search",
};

function itemSummary(item: Record<string, unknown>): string {
  if (item.type === "file_change") {
    const changes = Array.isArray(item.changes) ? item.changes.map(obj) : [];
    return changes.map((c) => `${str(c.kind) ?? "edit"} ${str(c.path) ?? ""}`.trim()).join(", ");
  }
  if (item.type === "mcp_tool_call") return `${str(item.server) ?? ""}.${str(item.tool) ?? ""}`;
  return toolSummary(item.command ?? item.query ?? item);
}

/** `codex exec --json` events → muster messages. */
export function codexParser() {
  let lastMessage = "";
  let failed: string | undefined;
  return jsonlParser((o): AgentMessage[] => {
    const item = obj(o.item);
    switch (o.type) {
      case "thread.started":
        return str(o.thread_id) ? [{ type: "session", id: o.thread_id as string }] : [];
      case "item.started": {
        const name = TOOL_ITEMS[str(item.type) ?? ""];
        return name ? [{ type: "tool", phase: "start", name, summary: itemSummary(item) }] : [];
      }
      case "item.completed": {
        if (item.type === "agent_message" && str(item.text)) {
          lastMessage = item.text as string;
          return [{ type: "text", text: `${lastMessage}\n` }];
        }
        if (item.type === "reasoning" && str(item.text))
          return [{ type: "progress", text: toolSummary(item.text) }];
        const name = TOOL_ITEMS[str(item.type) ?? ""];
        if (!name) return [];
        const code = num(item.exit_code);
        const bad = item.status === "failed" || (code !== undefined && code !== 0);
        return [
          {
            type: "tool",
            phase: "end",
            name,
            summary: bad ? `failed${code !== undefined ? ` (exit ${code})` : ""}` : "",
          },
        ];
      }
      case "turn.completed": {
        const u = obj(o.usage);
        return [
          { type: "usage", usage: { input: num(u.input_tokens) ?? 0, output: num(u.output_tokens) ?? 0 } },
          { type: "result", status: "completed", text: lastMessage },
        ];
      }
      case "turn.failed": {
        failed = str(obj(o.error).message) ?? "the turn failed";
        // `codex exec --json` says only its own words (the app-server says more: codexErrorInfo).
        const providerError = classifyText(failed);
        return [
          { type: "result", status: "errored", reason: failed, ...(providerError ? { providerError } : {}) },
        ];
      }
      case "error":
        // Reconnect notices arrive as errors before the final one: progress, not the outcome.
        return str(o.message) ? [{ type: "progress", text: o.message as string }] : [];
    }
    return [];
  });
}

export const tomlString = (s: string): string => JSON.stringify(s);

/** OpenAI Codex CLI, headless: `codex exec --json`. */
export const codexRunner: Runner = {
  name: "codex",
  description: "OpenAI Codex CLI (`codex exec --json`); resumes with `codex exec resume <thread>`",
  binary: {
    command: "codex",
    envVar: ENV.codexBin,
    install: "npm install -g @openai/codex",
    tested: { pkg: "@openai/codex", version: "0.171.0" },
  },
  usage:
    "codex exec --json --skip-git-repo-check --sandbox workspace-write [-m <m>] [-c model_reasoning_effort=<r>] [-c developer_instructions=<body>] [--output-schema <runnerDir>/output-schema-<turn>.json] [resume <thread>] -- <prompt>",
  catalog: {
    provider: "openai",
    open: true,
    reasoning: EFFORT,
    models: ["gpt-5.5", "gpt-5.1-codex", "gpt-5-codex", "gpt-5"].map((m) => ({
      id: `openai:${m}`,
      reasoning: EFFORT,
    })),
  },
  resumeMode: () => "native",
  ignores: ["tools", "disallowedTools", "maxTurns"],
  // permissions: ask → app-server approval requests reach the parent (session mode; codex-app.ts).
  routesPermissions: true,
  // --output-schema is sent with `strict: true`: only a schema OpenAI's strict mode accepts goes that way.
  nativeSchema: strictSchema,
  plan(input: TurnInput): TurnPlan {
    const settings = [
      ...modelSettings(input),
      ...(input.systemPrompt?.trim() && !input.runnerSessionId
        ? ["-c", `developer_instructions=${tomlString(input.systemPrompt.trim())}`]
        : []),
    ];
    // "-" makes codex read the prompt from stdin.
    const prompt = passPrompt(input, input.prompt, (p) => ["--", p], ["--", "-"]);
    const argv = [
      binaryOf(this.binary!, input.env),
      "exec",
      "--json",
      "--skip-git-repo-check",
      // Headless: no approvals can be answered, so commands run inside codex's workspace-write sandbox.
      "--sandbox",
      "workspace-write",
      ...settings,
      ...(input.outputSchema ? ["--output-schema", schemaFile(input, input.outputSchema)] : []),
      ...(input.runnerSessionId ? ["resume", input.runnerSessionId] : []),
      ...prompt.args,
    ];
    // Settles on its `turn.completed`/`turn.failed` record: its session is on disk by then (resume checked with the process killed right there).
    return { ...cliPlan(input, argv, codexParser(), prompt), settleOnResult: true };
  },
  /**
   * `codex app-server`: one process for the child's life, a `turn/start` a turn. As one-shot, commands run in
   * the workspace-write sandbox without approvals, unless the profile says `permissions: ask`: then codex asks
   * before any command it does not trust (policy `untrusted`) and the parent answers. Both go in the thread's
   * parameters: 0.171 refuses `approval_policy = "untrusted"` as config but takes it there.
   */
  session(input: TurnInput): SessionSpec<CodexThread> {
    const approvalPolicy = input.permissions === "ask" ? "untrusted" : "never";
    return {
      protocol: "codex-app",
      argv: [binaryOf(this.binary!, input.env), "app-server", ...modelSettings(input, true)],
      cwd: input.cwd,
      env: input.env,
      ...(input.runnerSessionId ? { resume: input.runnerSessionId } : {}),
      options: {
        approvalPolicy,
        sandbox: "workspace-write",
        ...(input.systemPrompt?.trim() ? { developerInstructions: input.systemPrompt.trim() } : {}),
      },
    };
  },
};

/** The model, its provider and reasoning as codex options (`-m` is exec's; app-server takes `-c model=`). */
export function modelSettings(input: TurnInput, configOnly = false): string[] {
  const { provider, id } = splitModel(input.model);
  return [
    ...(id ? (configOnly ? ["-c", `model=${tomlString(id)}`] : ["-m", id]) : []),
    // The provider is only named when it is not OpenAI's own: otherwise the user's config.toml decides it.
    ...(provider && provider !== "openai" ? ["-c", `model_provider=${tomlString(provider)}`] : []),
    ...(input.reasoning ? ["-c", `model_reasoning_effort=${tomlString(input.reasoning)}`] : []),
  ];
}
