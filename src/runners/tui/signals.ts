/**
 * Building a TuiSignal from a hook record. Claude Code, Codex and Gemini CLI send one payload shape
 * (`session_id`, `transcript_path`, `prompt`, `tool_name`, `tool_input`); muster's own extensions (Pi's,
 * OpenCode's plugin) another (own-hooks.ts). Each adapter reads its fields; the signals are built here.
 */
import { str, toolSummary } from "../common/shared.js";
import type { TuiSignal } from "./types.js";

type Refs = { sessionId?: string; transcript?: string };

/**
 * The session id and transcript path of a payload in Claude Code's shape, as optional fields of a TuiSignal:
 * `sid` alone, or both.
 */
export function hookRefs(p: Record<string, unknown>): { sid: { sessionId?: string }; common: Refs } {
  const sessionId = str(p.session_id);
  const transcript = str(p.transcript_path);
  const sid = sessionId ? { sessionId } : {};
  return { sid, common: { ...sid, ...(transcript ? { transcript } : {}) } };
}

/** A prompt was submitted: `prompt` is its text when the record carries one. */
export function startSignal(prompt: unknown, refs: Refs): TuiSignal {
  const text = str(prompt);
  return { kind: "start", ...refs, ...(text !== undefined ? { prompt: text } : {}) };
}

/** A tool-start or tool-end record: the start summarises the tool's input, a failed end says "error". */
export function toolSignal(
  event: "tool-start" | "tool-end",
  name: unknown,
  input: unknown,
  failed: boolean,
  refs: { sessionId?: string } = {},
): TuiSignal {
  const start = event === "tool-start";
  return {
    kind: "tool",
    phase: start ? "start" : "end",
    name: str(name) ?? "tool",
    summary: start ? toolSummary(input) : failed ? "error" : "",
    ...refs,
  };
}
