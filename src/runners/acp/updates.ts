/**
 * The Agent Client Protocol's streamed `session/update` notifications and `session/prompt` responses, read into
 * muster's agent messages (the same ones a headless CLI's stdout parser gives). One reader per turn.
 */
import { oneLine } from "../../util/text.js";
import { bodyCodes, classifyProvider, classifyText, type ProviderError } from "../common/provider-error.js";
import { num, obj, str, toolSummary } from "../common/shared.js";
import type { AgentMessage } from "../types.js";
import { RpcError } from "./rpc.js";

export interface AcpTurnReader {
  update(update: unknown): AgentMessage[];
  /** The turn's `session/prompt` response: its usage and how it ended. */
  end(response: unknown): AgentMessage[];
  /** The turn's `session/prompt` request failed (an upstream error, a refused prompt). */
  failed(message: string, providerError?: ProviderError): AgentMessage[];
  /** The parent refused a tool this turn asked for (`tool`: its name and summary). */
  denied(tool: string): void;
}

export function acpTurnReader(): AcpTurnReader {
  // The answer is what the agent said after its last tool call (earlier text was narration between tools).
  let segment = "";
  const open = new Map<string, string>();
  const announced = new Map<string, Record<string, unknown>>();
  const ended = new Set<string>();
  const refused: string[] = [];
  const startTool = (id: string, name: string, input: unknown): AgentMessage[] => {
    if (open.has(id) || ended.has(id)) return [];
    open.set(id, name);
    const newline: AgentMessage[] = segment && !segment.endsWith("\n") ? [{ type: "text", text: "\n" }] : [];
    segment = "";
    return [...newline, { type: "tool", phase: "start", name, summary: toolSummary(input) }];
  };
  const endTool = (id: string, status: string, u: Record<string, unknown>): AgentMessage[] => {
    const name = open.get(id);
    if (name === undefined) return [];
    open.delete(id);
    ended.add(id);
    const failed = status === "failed";
    return [{ type: "tool", phase: "end", name, summary: failed ? `error: ${failureText(u)}` : "" }];
  };
  return {
    update(raw) {
      const u = obj(raw);
      switch (u.sessionUpdate) {
        case "agent_message_chunk": {
          const c = obj(u.content);
          if (c.type !== "text" || !str(c.text)) return [];
          segment += c.text as string;
          return [{ type: "text", text: c.text as string }];
        }
        case "tool_call":
        case "tool_call_update": {
          const id = str(u.toolCallId) ?? "";
          // A pending call may not carry its input yet (opencode sends the command in a later update): it is
          // announced once it runs, with the fullest input seen by then.
          const seen = { ...(announced.get(id) ?? {}), ...definedOf(u) };
          announced.set(id, seen);
          const status = str(u.status) ?? "in_progress";
          if (status === "pending") return [];
          const out = startTool(id, toolName(seen), seen.rawInput ?? seen.title);
          return status === "completed" || status === "failed" ? [...out, ...endTool(id, status, u)] : out;
        }
        default:
          return [];
      }
    },
    end(response) {
      const r = obj(response);
      const out: AgentMessage[] = segment && !segment.endsWith("\n") ? [{ type: "text", text: "\n" }] : [];
      const usage = usageOf(r);
      if (usage) out.push({ type: "usage", usage });
      const stop = str(r.stopReason) ?? "end_turn";
      if (stop === "end_turn") out.push({ type: "result", status: "completed", text: segment });
      else if (stop === "max_tokens" || stop === "max_turn_requests")
        out.push({ type: "result", status: "exhausted", reason: `the agent stopped: ${stop}` });
      else if (stop === "refusal")
        out.push({ type: "result", status: "errored", reason: "the agent refused" });
      // An agent that ends its turn once a tool was refused (codex-acp says "cancelled") has answered: what it
      // said is the answer, and the reason names the refusal.
      else if (stop === "cancelled" && refused.length > 0)
        out.push({
          type: "result",
          status: "completed",
          text: segment,
          reason: `the agent ended its turn after the parent denied ${refused.join(", ")}`,
        });
      // Any other "cancelled": the turn was stopped from here; the host's stop reason decides its outcome.
      return out;
    },
    failed(message, providerError) {
      return [
        { type: "result", status: "errored", reason: message, ...(providerError ? { providerError } : {}) },
      ];
    },
    denied(tool) {
      if (!refused.includes(tool)) refused.push(tool);
    },
  };
}

/** The fields of a tool update that say something (later updates add to earlier ones). */
function definedOf(u: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["title", "kind", "rawInput"]) if (u[k] !== undefined && u[k] !== null) out[k] = u[k];
  return out;
}

/** The name muster shows for a tool call (its activity, its permission request). */
export function toolName(u: Record<string, unknown>): string {
  // `title` is often the command itself; `kind` (execute, edit, read, …) names the tool.
  return str(u.kind) ?? str(u.title) ?? "tool";
}

/** Why a tool call failed, one line: its error or output text, never its input (the command is shown already). */
function failureText(u: Record<string, unknown>): string {
  const raw = obj(u.rawOutput);
  const code = num(raw.exit_code) ?? num(raw.exitCode);
  const text =
    [raw.error, obj(raw.error).message, raw.stderr, raw.formatted_output, raw.aggregated_output, raw.output]
      .map((v) => str(v)?.trim())
      .find((v) => v) ??
    (typeof u.rawOutput === "string" && u.rawOutput.trim() ? u.rawOutput : undefined) ??
    contentText(u.content);
  const why = text ? oneLine(text.replace(/^```\w*\n?|\n?```\s*$/g, "")) : "";
  return code !== undefined && code !== 0 ? `exit ${code}${why ? `: ${why}` : ""}` : why || "failed";
}

/** The text of a tool call's content blocks (`{type: "content", content: {type: "text", text}}`). */
function contentText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = content.map((b) => str(obj(obj(b).content).text)?.trim()).filter((t) => t);
  return texts.length > 0 ? texts.join(" ") : undefined;
}

/** Token counts in the spellings ACP agents use: `usage` (the protocol's), or Gemini's `_meta.quota`. */
function usageOf(r: Record<string, unknown>): { input: number; output: number } | undefined {
  const u = obj(r.usage);
  if (num(u.inputTokens) !== undefined || num(u.outputTokens) !== undefined)
    return { input: num(u.inputTokens) ?? 0, output: num(u.outputTokens) ?? 0 };
  const q = obj(obj(obj(r._meta).quota).token_count);
  if (num(q.input_tokens) !== undefined || num(q.output_tokens) !== undefined)
    return { input: num(q.input_tokens) ?? 0, output: num(q.output_tokens) ?? 0 };
  return undefined;
}

/**
 * An agent's error message with its detail: the JSON error body some agents pass on as the message (Gemini),
 * and `data` as the agents spell it (`details`: claude-agent-acp, Gemini; a JSON string: codex-acp).
 */
export function errorMessage(message: string, data?: unknown): string {
  const inner = detailOf(parsed(message));
  const detail = detailOf(typeof data === "string" ? (parsed(data) ?? data) : data);
  if (inner) return detail && detail !== inner ? `${inner}: ${detail}` : inner;
  return detail && detail !== message ? `${message}: ${detail}` : message;
}

/** The text an error body carries, in the spellings agents use. */
function detailOf(v: unknown, depth = 0): string | undefined {
  if (typeof v === "string") return v.trim() ? v.trim() : undefined;
  const o = obj(v);
  if (depth > 3) return undefined;
  for (const k of ["details", "message", "error", "detail"]) {
    const found = detailOf(typeof o[k] === "string" ? (parsed(o[k] as string) ?? o[k]) : o[k], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** A JSON object or string written as text, else undefined. */
function parsed(text: string): unknown {
  const t = text.trim();
  if (!t.startsWith("{") && !t.startsWith('"')) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

/**
 * A failed `session/prompt` as a provider error. Gemini CLI answers with the HTTP status as the JSON-RPC code
 * and the API's error body or its own words as the message; OpenCode with -32603, `data.errorName: "APIError"`
 * and the provider's message after "Internal error: ". Neither carries more structure than that.
 */
export function acpProviderError(e: unknown): ProviderError | undefined {
  if (!(e instanceof RpcError)) return undefined;
  if (e.code >= 400 && e.code < 600) {
    if (e.message.trimStart().startsWith("{")) {
      const found = classifyProvider({
        status: e.code,
        codes: bodyCodes(e.message).codes,
        message: e.message,
      });
      if (found) return found;
    }
    return classifyText(e.message, e.code);
  }
  if (obj(e.data).errorName === "APIError") return classifyText(e.message.replace(/^Internal error: /, ""));
  return undefined;
}

/** Why a request to the agent failed: an RpcError with its data, else the error's message. */
export function failureOf(e: unknown): string {
  return e instanceof RpcError ? errorMessage(e.message, e.data) : (e as Error).message;
}
