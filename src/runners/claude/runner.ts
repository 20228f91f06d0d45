import { ENV } from "../../base/settings/table.js";
import { classifyProvider, type ProviderSignal } from "../common/provider-error.js";
import { inlineObjectSchema } from "../common/schema.js";
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

const EFFORT = ["low", "medium", "high", "xhigh", "max"];

/** Claude Code's `--output-format stream-json --verbose` records → muster messages. */
export function claudeParser() {
  const toolNames = new Map<string, string>();
  // Messages whose text already arrived as deltas (--include-partial-messages): their full record adds no text.
  const streamed = new Set<string>();
  // The API error of this turn's synthetic assistant record (`is_api_error_message`), and a subscription
  // limit's reset time (`rate_limit_event` rejected): the turn's result names the error, not its kind.
  let apiError: ProviderSignal | undefined;
  let limitResetsAt: number | undefined;
  return jsonlParser((o): AgentMessage[] => {
    const out: AgentMessage[] = [];
    const sid = str(o.session_id);
    switch (o.type) {
      case "rate_limit_event": {
        const info = obj(o.rate_limit_info);
        if (info.status === "rejected") limitResetsAt = num(info.resetsAt);
        break;
      }
      case "system":
        if (o.subtype === "init" && sid) out.push({ type: "session", id: sid });
        if (o.subtype === "api_retry") {
          const status = num(o.error_status) ?? str(o.error) ?? "error";
          const wait = ((num(o.retry_delay_ms) ?? 0) / 1000).toFixed(1);
          out.push({
            type: "progress",
            text: `API ${status}: retry ${num(o.attempt) ?? "?"}/${num(o.max_retries) ?? "?"} in ${wait} s`,
          });
        }
        break;
      case "stream_event": {
        const e = obj(o.event);
        const delta = obj(e.delta);
        if (e.type !== "content_block_delta" || delta.type !== "text_delta" || o.parent_tool_use_id) break;
        if (!str(delta.text)) break;
        if (str(o.api_message_id)) streamed.add(o.api_message_id as string);
        out.push({ type: "text", text: delta.text as string });
        break;
      }
      case "assistant": {
        if (o.is_api_error_message === true && !o.parent_tool_use_id)
          apiError = {
            ...(num(o.api_error_status) !== undefined ? { status: num(o.api_error_status) } : {}),
            codes: [str(o.error), str(o.api_error_type)],
            message: "",
          };
        // Sub-agent (Task) chatter carries a parent tool id: the pane shows its tools, not its text.
        const message = obj(o.message);
        const live = streamed.has(str(message.id) ?? "");
        for (const c of arr(message.content).map(obj)) {
          if (c.type === "text" && str(c.text) && !o.parent_tool_use_id)
            out.push({ type: "text", text: live ? "\n" : `${c.text}\n` });
          if (c.type === "tool_use") {
            const name = str(c.name) ?? "tool";
            if (str(c.id)) toolNames.set(c.id as string, name);
            out.push({ type: "tool", phase: "start", name, summary: toolSummary(c.input) });
          }
        }
        break;
      }
      case "user":
        for (const c of arr(obj(o.message).content).map(obj)) {
          if (c.type !== "tool_result") continue;
          const name = toolNames.get(str(c.tool_use_id) ?? "") ?? "tool";
          // A tool result is a string or a list of content blocks.
          const text =
            typeof c.content === "string"
              ? c.content
              : arr(c.content)
                  .map((b) => str(obj(b).text) ?? "")
                  .join(" ");
          out.push({
            type: "tool",
            phase: "end",
            name,
            summary: c.is_error ? `error: ${toolSummary(text)}` : "",
          });
        }
        break;
      case "result": {
        if (sid) out.push({ type: "session", id: sid });
        const u = obj(o.usage);
        // total_cost_usd is the session's running total; the per-result figure is this turn's.
        const perTurn = Object.values(obj(o.model_usage_since_last_result)).map(
          (m) => num(obj(m).costUSD) ?? 0,
        );
        const cost = perTurn.length > 0 ? perTurn.reduce((a, b) => a + b, 0) : num(o.total_cost_usd);
        const input =
          (num(u.input_tokens) ?? 0) +
          (num(u.cache_read_input_tokens) ?? 0) +
          (num(u.cache_creation_input_tokens) ?? 0);
        out.push({
          type: "usage",
          usage: { input, output: num(u.output_tokens) ?? 0, ...(cost !== undefined ? { cost } : {}) },
        });
        // A tool the profile did not allow was refused without a prompt: say which, so the profile can be fixed.
        const denied = [...new Set(arr(o.permission_denials).map((d) => str(obj(d).tool_name) ?? "tool"))];
        if (denied.length > 0) {
          out.push({
            type: "progress",
            text: `permission denied for ${denied.join(", ")} (allow it in the profile's tools)`,
          });
          // Structured too: the child then shows waiting-permission until a person allows it and resumes.
          for (const tool of denied) out.push({ type: "permission", state: "denied", tool });
        }
        const errors = arr(o.errors).filter((e): e is string => typeof e === "string");
        // With --json-schema the answer is the StructuredOutput tool's input: that value, exactly, as JSON.
        const text = o.structured_output !== undefined ? JSON.stringify(o.structured_output) : str(o.result);
        if (o.subtype === "error_max_turns") {
          out.push({
            type: "result",
            status: "exhausted",
            reason: errors[0] ?? "reached the maximum number of turns",
          });
        } else if (o.is_error || o.subtype !== "success") {
          const reason = text ?? errors[0] ?? String(o.subtype);
          const status = num(o.api_error_status) ?? apiError?.status;
          const providerError =
            status !== undefined || apiError
              ? classifyProvider({
                  ...(status !== undefined ? { status } : {}),
                  codes: [...(apiError?.codes ?? []), str(o.api_error_type)],
                  ...(limitResetsAt !== undefined ? { resetAt: limitResetsAt } : {}),
                  message: reason,
                })
              : undefined;
          out.push({
            type: "result",
            status: "errored",
            reason,
            ...(providerError ? { providerError } : {}),
          });
          apiError = undefined;
        } else out.push({ type: "result", status: "completed", text: text ?? "" });
        break;
      }
    }
    return out;
  });
}

/** Claude Code, headless: `claude -p --output-format stream-json --verbose`. */
export const claudeRunner: Runner = {
  name: "claude",
  description: "Claude Code (`claude -p`, stream-json); resumes with --resume <session>",
  binary: {
    command: "claude",
    envVar: ENV.claudeBin,
    install: "npm install -g @anthropic-ai/claude-code",
    tested: { pkg: "@anthropic-ai/claude-code", version: "2.1.332" },
  },
  usage:
    "claude -p --output-format stream-json --verbose --include-partial-messages --permission-mode acceptEdits --allowedTools <tools|Bash> [--tools <tools>] [--disallowedTools <tools>] [--max-turns <n>] [--model <m>] [--effort <r>] [--append-system-prompt <body>] [--json-schema <schema>] [--resume <session>] -- <prompt>",
  catalog: {
    provider: "anthropic",
    open: true,
    reasoning: EFFORT,
    models: ["claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5", "opus", "sonnet", "haiku"].map(
      (m) => ({
        id: `anthropic:${m}`,
        reasoning: EFFORT,
      }),
    ),
  },
  resumeMode: () => "native",
  routesPermissions: true,
  // --json-schema makes the schema the input of a StructuredOutput tool the model must call: an object root.
  nativeSchema: inlineObjectSchema,
  plan(input: TurnInput): TurnPlan {
    const prompt = passPrompt(input, input.prompt, (p) => ["--", p]);
    const argv = [
      ...claudeArgs(binaryOf(this.binary!, input.env), input, ["-p"]),
      ...(input.outputSchema ? ["--json-schema", JSON.stringify(input.outputSchema)] : []),
      ...(input.runnerSessionId ? ["--resume", input.runnerSessionId] : []),
      ...prompt.args,
    ];
    // Settles on its `result` record: its session is on disk by then (resume checked with the process killed right there).
    return { ...cliPlan(input, argv, claudeParser(), prompt), settleOnResult: true };
  },
  /** `claude -p --input-format stream-json`: one process for the child's life, a user message a turn. */
  session(input: TurnInput): SessionSpec {
    return {
      protocol: "claude-stream",
      argv: [
        ...claudeArgs(binaryOf(this.binary!, input.env), input, ["-p", "--input-format", "stream-json"]),
        // Its permission prompts come to muster as `can_use_tool` control requests on stdout (claude-stream.ts).
        ...(input.permissions === "ask" ? ["--permission-prompt-tool", "stdio"] : []),
      ],
      cwd: input.cwd,
      env: input.env,
      ...(input.runnerSessionId
        ? { resume: input.runnerSessionId, resumeArgs: ["--resume", input.runnerSessionId] }
        : {}),
    };
  },
};

/** The argv a child's Claude Code runs with, one-shot or long-lived (`head` picks which), without the prompt. */
function claudeArgs(bin: string, input: TurnInput, head: string[]): string[] {
  const { id } = splitModel(input.model);
  const ask = input.permissions === "ask";
  const allowed = input.tools && input.tools.length > 0 ? input.tools : ask ? [] : ["Bash"];
  // Headless children cannot answer a permission prompt: edits are accepted and the listed tools pre-approved
  // (bypassPermissions is refused when running as root, which CI and containers often are). With
  // `permissions: ask` only the profile's tools are pre-approved: the rest prompt, and the parent answers.
  return [
    bin,
    ...head,
    "--output-format",
    "stream-json",
    "--verbose",
    // Text as it is generated, so the pane shows the answer being written.
    "--include-partial-messages",
    ...(ask ? [] : ["--permission-mode", "acceptEdits"]),
    ...(allowed.length > 0 ? ["--allowedTools", allowed.join(",")] : []),
    // --tools takes bare tool names; permission rules such as Bash(git:*) only go to --allowedTools.
    ...(input.tools && input.tools.length > 0
      ? ["--tools", [...new Set(input.tools.map((t) => t.replace(/\(.*$/, "").trim()))].join(",")]
      : []),
    ...(input.disallowedTools?.length ? ["--disallowedTools", input.disallowedTools.join(",")] : []),
    ...(input.maxTurns !== undefined ? ["--max-turns", String(input.maxTurns)] : []),
    ...(id ? ["--model", id] : []),
    ...(input.reasoning ? ["--effort", input.reasoning] : []),
    ...(input.systemPrompt?.trim() ? ["--append-system-prompt", input.systemPrompt.trim()] : []),
  ];
}
