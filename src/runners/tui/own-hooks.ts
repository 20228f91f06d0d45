/**
 * The records muster's own in-process extensions write (Pi's extension, OpenCode's plugin; hook-line.ts), in
 * one shape: ready, start (the prompt), tool-start/tool-end (`tool`, `args`, `error`) and permission, each with
 * the CLI's `session_id`. Each adapter reads its `stop` itself: what a run's end carries differs by CLI.
 */
import { obj, str } from "../common/shared.js";
import { startSignal, toolSignal } from "./signals.js";
import type { HookLine, TuiSignal } from "./types.js";

export function ownHookSignal(line: HookLine): TuiSignal | undefined {
  const p = obj(line.payload);
  const sessionId = str(p.session_id);
  const sid = sessionId ? { sessionId } : {};
  switch (line.event) {
    case "ready":
      return { kind: "ready", ...sid };
    case "start":
      return startSignal(p.prompt, sid);
    case "tool-start":
    case "tool-end":
      return toolSignal(line.event, p.tool, p.args, p.error === true);
    case "permission":
      return { kind: "permission", ...sid };
    default:
      return undefined;
  }
}
