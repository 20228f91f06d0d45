/**
 * The Agent Client Protocol's streamed `session/update` notifications and `session/prompt` responses, read into
 * muster's agent messages (the same ones a headless CLI's stdout parser gives). One reader per turn.
 */
import { num, obj, str, toolSummary } from "../clis/shared.js";
import type { AgentMessage } from "../types.js";

export interface AcpTurnReader {
  update(update: unknown): AgentMessage[];
  /** The turn's `session/prompt` response: its usage and how it ended. */
  end(response: unknown): AgentMessage[];
  /** The turn's `session/prompt` request failed (an upstream error, a refused prompt). */
  failed(message: string): AgentMessage[];
}

export function acpTurnReader(): AcpTurnReader {
  // The answer is what the agent said after its last tool call (earlier text was narration between tools).
  let segment = "";
  const open = new Map<string, string>();
  const announced = new Map<string, Record<string, unknown>>();
  const ended = new Set<string>();
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
    return [
      { type: "tool", phase: "end", name, summary: failed ? `error: ${toolSummary(failureText(u))}` : "" },
    ];
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
      // "cancelled": the turn was stopped from here; the host's stop reason decides its outcome.
      return out;
    },
    failed(message) {
      return [{ type: "result", status: "errored", reason: message }];
    },
  };
}

/** The fields of a tool update that say something (later updates add to earlier ones). */
function definedOf(u: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ["title", "kind", "rawInput"]) if (u[k] !== undefined && u[k] !== null) out[k] = u[k];
  return out;
}

function toolName(u: Record<string, unknown>): string {
  // `title` is often the command itself; `kind` (execute, edit, read, …) names the tool.
  return str(u.kind) ?? str(u.title) ?? "tool";
}

function failureText(u: Record<string, unknown>): unknown {
  const raw = obj(u.rawOutput);
  return str(raw.error) ?? str(raw.output) ?? u.rawOutput ?? "";
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

/** An agent's error message, unwrapped when it is itself a JSON error body (Gemini passes the upstream's on). */
export function errorMessage(message: string, data?: unknown): string {
  const inner = (() => {
    try {
      const o = obj(JSON.parse(message));
      return str(obj(o.error).message) ?? str(o.message);
    } catch {
      return undefined;
    }
  })();
  const detail = str(obj(data).message) ?? (typeof data === "string" ? data : undefined);
  return inner ?? (detail ? `${message}: ${detail}` : message);
}
