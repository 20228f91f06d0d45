import type { ProviderError } from "../artifacts/events.js";
import type { AgentMessage, StreamProtocol } from "./types.js";

const isStr = (v: unknown): v is string => typeof v === "string";
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Reads one stdout line of muster's JSONL agent protocol; anything else becomes a `raw` line. */
export function parseAgentLine(line: string): AgentMessage {
  const trimmed = line.trim();
  if (!trimmed.startsWith("{")) return { type: "raw", text: line };
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(trimmed) as Record<string, unknown>;
  } catch {
    return { type: "raw", text: line };
  }
  switch (o.type) {
    case "text":
      if (isStr(o.text)) return { type: "text", text: o.text };
      break;
    case "tool":
      if ((o.phase === "start" || o.phase === "end") && isStr(o.name)) {
        return { type: "tool", phase: o.phase, name: o.name, summary: isStr(o.summary) ? o.summary : "" };
      }
      break;
    case "usage":
      if (isNum(o.input) && isNum(o.output)) {
        return {
          type: "usage",
          usage: { input: o.input, output: o.output, ...(isNum(o.cost) ? { cost: o.cost } : {}) },
        };
      }
      break;
    case "session":
      if (isStr(o.id)) return { type: "session", id: o.id };
      break;
    case "progress":
      if (isStr(o.text)) return { type: "progress", text: o.text };
      break;
    case "permission":
      if (
        (o.state === "pending" || o.state === "granted" || o.state === "denied") &&
        isStr(o.tool) &&
        o.tool
      ) {
        return {
          type: "permission",
          state: o.state,
          tool: o.tool,
          ...(isStr(o.summary) && o.summary ? { summary: o.summary } : {}),
        };
      }
      break;
    case "result":
      if (o.status === "completed" || o.status === "errored" || o.status === "exhausted") {
        return {
          type: "result",
          status: o.status,
          ...(isStr(o.text) ? { text: o.text } : {}),
          ...(isStr(o.reason) ? { reason: o.reason } : {}),
          ...(o.status === "errored" && providerErrorOf(o.providerError)
            ? { providerError: providerErrorOf(o.providerError)! }
            : {}),
        };
      }
      break;
  }
  return { type: "raw", text: line };
}

const KINDS = new Set(["rate_limit", "quota", "auth", "overloaded"]);

/** An agent's own `providerError` on its result: kept when its kind is one muster knows. */
function providerErrorOf(v: unknown): ProviderError | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  const p = v as Record<string, unknown>;
  if (!isStr(p.kind) || !KINDS.has(p.kind)) return undefined;
  const resetAt =
    isStr(p.resetAt) && Number.isFinite(Date.parse(p.resetAt))
      ? new Date(p.resetAt).toISOString()
      : undefined;
  return {
    kind: p.kind as ProviderError["kind"],
    ...(resetAt ? { resetAt } : {}),
    message: isStr(p.message) ? p.message.slice(0, 2000) : p.kind,
  };
}

/** Maps a stdout line to messages under the given protocol (plain text: every line is answer text). */
export function parseStdoutLine(protocol: StreamProtocol, line: string): AgentMessage {
  return protocol === "muster-jsonl" ? parseAgentLine(line) : { type: "text", text: `${line}\n` };
}
