/**
 * The records muster's own in-process extensions write (Pi's extension, OpenCode's plugin; hook-line.ts), in
 * one shape: ready, start (the prompt), tool-start/tool-end (`tool`, `args`, `error`) and permission, each with
 * the CLI's `session_id`. Each adapter reads its `stop` itself: what a run's end carries differs by CLI.
 */
import { obj, str, toolSummary } from "../clis/shared.js";
import type { HookLine, TuiSignal } from "./types.js";

export function ownHookSignal(line: HookLine): TuiSignal | undefined {
  const p = obj(line.payload);
  const sessionId = str(p.session_id);
  const sid = sessionId ? { sessionId } : {};
  switch (line.event) {
    case "ready":
      return { kind: "ready", ...sid };
    case "start": {
      const prompt = str(p.prompt);
      return { kind: "start", ...sid, ...(prompt !== undefined ? { prompt } : {}) };
    }
    case "tool-start":
    case "tool-end": {
      const start = line.event === "tool-start";
      return {
        kind: "tool",
        phase: start ? "start" : "end",
        name: str(p.tool) ?? "tool",
        summary: start ? toolSummary(p.args) : p.error === true ? "error" : "",
      };
    }
    case "permission":
      return { kind: "permission", ...sid };
    default:
      return undefined;
  }
}
