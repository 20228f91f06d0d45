/**
 * Claude Code with `--input-format stream-json` as a session driver: each turn is one user message on stdin;
 * the same stream-json events as one-shot (claudeParser) follow, ending with that turn's `result`; an interrupt
 * is the `control_request` of subtype `interrupt`. The session id arrives with the first turn's `system` event.
 */
import type { SessionDriver, SessionIo } from "../types.js";
import { claudeParser } from "./claude.js";
import { jsonlSessionDriver } from "./jsonl-session.js";

export function claudeStreamDriver(io: SessionIo): SessionDriver {
  return jsonlSessionDriver(io, {
    parser: claudeParser,
    prompt: (text) => ({ type: "user", message: { role: "user", content: [{ type: "text", text }] } }),
    interrupt: (id) => ({ type: "control_request", request_id: id, request: { subtype: "interrupt" } }),
    acknowledges: false,
  });
}
