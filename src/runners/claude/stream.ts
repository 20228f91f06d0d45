/**
 * Claude Code with `--input-format stream-json` as a session driver: each turn is one user message on stdin;
 * the same stream-json events as one-shot (claudeParser) follow, ending with that turn's `result`; an interrupt
 * is the `control_request` of subtype `interrupt`. The session id arrives with the first turn's `system` event.
 * With `--permission-prompt-tool stdio` a tool that would prompt arrives as a `can_use_tool` control request,
 * answered by the parent (io.askPermission) with a `control_response` (checked against 2.1.332).
 */

import { jsonlSessionDriver } from "../common/jsonl-session.js";
import { obj, str, toolSummary } from "../common/shared.js";
import type { SessionDriver, SessionIo, StreamParser } from "../types.js";
import { claudeParser } from "./runner.js";

export function claudeStreamDriver(io: SessionIo): SessionDriver {
  // Tools the parent was asked about in this turn: their refusal is recorded already (the permission broker's event), so the
  // result's permission_denials for them add nothing (and must not leave the child waiting-permission).
  const asked = new Set<string>();
  const ask: SessionIo = {
    ...io,
    askPermission: (tool, summary) => {
      asked.add(tool);
      return io.askPermission(tool, summary);
    },
  };
  const parser = (): StreamParser => {
    // A new turn: what earlier turns asked says nothing about this one's refusals.
    asked.clear();
    const inner = claudeParser();
    return {
      line: (l) => inner.line(l).filter((m) => !(m.type === "permission" && asked.has(m.tool))),
      ...(inner.end ? { end: inner.end.bind(inner) } : {}),
    };
  };
  return jsonlSessionDriver(ask, {
    parser,
    prompt: (text) => ({ type: "user", message: { role: "user", content: [{ type: "text", text }] } }),
    interrupt: (id) => ({ type: "control_request", request_id: id, request: { subtype: "interrupt" } }),
    acknowledges: false,
    request: canUseTool,
  });
}

/** `{type: "control_request", request: {subtype: "can_use_tool", tool_name, input}}` → the parent's answer. */
function canUseTool(o: Record<string, unknown>, io: SessionIo): Promise<Record<string, unknown>> | undefined {
  const req = obj(o.request);
  if (o.type !== "control_request" || req.subtype !== "can_use_tool") return undefined;
  const requestId = str(o.request_id) ?? "";
  const tool = str(req.tool_name) ?? "a tool";
  const input = obj(req.input);
  const summary = str(req.description) ?? (req.input !== undefined ? toolSummary(req.input) : undefined);
  return io.askPermission(tool, summary).then((answer) => ({
    type: "control_response",
    response: {
      subtype: "success",
      request_id: requestId,
      response:
        answer === "deny"
          ? {
              behavior: "deny",
              message: "The parent denied this tool call (muster deny, or no answer in time).",
            }
          : {
              behavior: "allow",
              updatedInput: input,
              // "Always": this tool needs no prompt again in this session (never written to any settings file).
              ...(answer === "allow_always"
                ? {
                    updatedPermissions: [
                      {
                        type: "addRules",
                        rules: [{ toolName: tool }],
                        behavior: "allow",
                        destination: "session",
                      },
                    ],
                  }
                : {}),
            },
    },
  }));
}
