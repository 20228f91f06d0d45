import { ENV } from "../../base/settings/table.js";
import { bodyCodes, classifyProvider, lowerHeaders, type ProviderError } from "../common/provider-error.js";
import {
  binaryOf,
  cliPlan,
  jsonlParser,
  jsonObject,
  num,
  obj,
  passPrompt,
  splitModel,
  str,
  toolSummary,
  withInstructions,
} from "../common/shared.js";
import type { AgentMessage, Runner, SessionSpec, TurnInput, TurnPlan } from "../types.js";

/** `opencode run --format json` events → muster messages. */
export function opencodeParser() {
  let stepText = "";
  let answer = "";
  let error: string | undefined;
  let finished = false;
  let settled = false;
  return jsonlParser(
    (o): AgentMessage[] => {
      const part = obj(o.part);
      const out: AgentMessage[] = [];
      if (o.type === "step_start") {
        stepText = "";
        if (str(o.sessionID)) out.push({ type: "session", id: o.sessionID as string });
      } else if (o.type === "text" && str(part.text)) {
        stepText += part.text as string;
        out.push({ type: "text", text: `${part.text as string}\n` });
      } else if (o.type === "tool_use") {
        // opencode reports a tool once, when it is over: start and end arrive together.
        const state = obj(part.state);
        const name = str(part.tool) ?? "tool";
        out.push({ type: "tool", phase: "start", name, summary: toolSummary(state.input ?? state.title) });
        const failed = state.status === "error";
        out.push({
          type: "tool",
          phase: "end",
          name,
          summary: failed ? `error: ${toolSummary(state.error)}` : "",
        });
      } else if (o.type === "step_finish") {
        const t = obj(part.tokens);
        const cache = obj(t.cache);
        const input = (num(t.input) ?? 0) + (num(cache.read) ?? 0) + (num(cache.write) ?? 0);
        const cost = num(part.cost);
        out.push({ type: "usage", usage: { input, output: num(t.output) ?? 0, ...(cost ? { cost } : {}) } });
        if (stepText) answer = stepText;
        if (part.reason !== "tool-calls") finished = true;
        // A step that stopped (not for tool calls, a length cut or an error) ends the turn: its answer is the
        // result now, without waiting for the process to exit (the host settles on it and reaps the process).
        if (part.reason === "stop" && !error && !settled) {
          settled = true;
          out.push({ type: "result", status: "completed", text: answer });
        }
      } else if (o.type === "error") {
        const e = obj(o.error);
        error = str(obj(e.data).message) ?? str(e.message) ?? str(e.name) ?? "opencode reported an error";
        const providerError = opencodeProviderError(e, error);
        out.push({
          type: "result",
          status: "errored",
          reason: error,
          ...(providerError ? { providerError } : {}),
        });
      }
      return out;
    },
    ({ code }) => {
      if (error || settled) return [];
      // A last step that did not say "stop": a clean exit after it is the answer.
      if (code === 0 && finished) return [{ type: "result", status: "completed", text: answer }];
      return [];
    },
  );
}

// opencode run cannot answer a permission prompt: the child's own config allows what the profile allows. With
// `permissions: ask` they ask instead (acp routes each to the parent), except the tools the profile lists.
export function childConfig(input: TurnInput, model?: string): string {
  const base = jsonObject(input.env.OPENCODE_CONFIG_CONTENT ?? "") ?? {};
  const tools: Record<string, boolean> = {};
  if (input.tools?.length) {
    tools["*"] = false;
    for (const t of input.tools) tools[t.toLowerCase()] = true;
  }
  for (const t of input.disallowedTools ?? []) tools[t.toLowerCase()] = false;
  return JSON.stringify({
    ...base,
    ...(model ? { model } : {}),
    permission: { ...permissions(input), ...obj(base.permission) },
    ...(Object.keys(tools).length > 0 ? { tools: { ...obj(base.tools), ...tools } } : {}),
  });
}

function permissions(input: TurnInput): Record<string, string> {
  const listed = new Set((input.tools ?? []).map((t) => t.toLowerCase()));
  const mode = (tool: string) => (input.permissions !== "ask" || listed.has(tool) ? "allow" : "ask");
  return { bash: mode("bash"), edit: mode("edit"), webfetch: mode("webfetch") };
}

/** OpenCode, headless: `opencode run --format json`. */
export const opencodeRunner: Runner = {
  name: "opencode",
  description: "OpenCode (`opencode run --format json`); resumes with --session <id>",
  binary: {
    command: "opencode",
    envVar: ENV.opencodeBin,
    install: "npm install -g opencode-ai",
    tested: { pkg: "opencode-ai", version: "1.18.33" },
  },
  usage:
    "opencode run --format json [-m <provider/model>] [--variant <r>] [--session <id>] -- <prompt>   (env OPENCODE_CONFIG_CONTENT: permissions, tools)",
  catalog: { provider: "opencode", open: true, models: [] },
  resumeMode: () => "native",
  ignores: ["maxTurns"],
  routesPermissions: true,
  plan(input: TurnInput): TurnPlan {
    const model = opencodeModel(input.model);
    const prompt = passPrompt(input, withInstructions(input), (p) => ["--", p]);
    const argv = [
      binaryOf(this.binary!, input.env),
      "run",
      "--format",
      "json",
      ...(model ? ["-m", model] : []),
      ...(input.reasoning ? ["--variant", input.reasoning] : []),
      ...(input.runnerSessionId ? ["--session", input.runnerSessionId] : []),
      ...prompt.args,
    ];
    const env = { ...input.env, OPENCODE_CONFIG_CONTENT: childConfig(input) };
    return { ...cliPlan(input, argv, opencodeParser(), prompt, env), settleOnResult: true };
  },
  /** `opencode acp`: one process for the child's life; the model goes in its config (acp has no -m). */
  session(input: TurnInput): SessionSpec | undefined {
    // A reasoning variant has no place in acp's config: such turns run one-shot (`run --variant`).
    if (input.reasoning) return undefined;
    const model = opencodeModel(input.model);
    return {
      protocol: "acp",
      argv: [binaryOf(this.binary!, input.env), "acp"],
      cwd: input.cwd,
      env: { ...input.env, OPENCODE_CONFIG_CONTENT: childConfig(input, model) },
      ...(input.runnerSessionId ? { resume: input.runnerSessionId } : {}),
      ...(input.systemPrompt?.trim() ? { preamble: input.systemPrompt.trim() } : {}),
    };
  },
};

/**
 * OpenCode's `APIError` carries the provider's answer whole: `data.statusCode`, `data.responseHeaders` (the
 * reset headers) and `data.responseBody` (the provider's error type and code).
 */
export function opencodeProviderError(
  e: Record<string, unknown>,
  message: string,
): ProviderError | undefined {
  if (e.name !== "APIError") return undefined;
  const data = obj(e.data);
  const status = num(data.statusCode);
  const headers = lowerHeaders(data.responseHeaders);
  // A zero hint only says "retry now"; it is no reset time.
  if (headers["retry-after-ms"] === "0") delete headers["retry-after-ms"];
  return classifyProvider({
    ...(status !== undefined ? { status } : {}),
    codes: bodyCodes(str(data.responseBody) ?? "").codes,
    headers,
    message,
  });
}

/** muster's `provider:model` in opencode's `provider/model` spelling (a bare or opencode id as is). */
export function opencodeModel(spec: string | undefined): string | undefined {
  const { provider, id } = splitModel(spec);
  return id ? (provider && provider !== "opencode" ? `${provider}/${id}` : id) : undefined;
}
