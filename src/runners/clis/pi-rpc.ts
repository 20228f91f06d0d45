/**
 * Pi's RPC mode (`pi --mode rpc`) as a session driver: `prompt`, `abort` and `get_state` commands on stdin,
 * acknowledged by `{type: "response"}`; the same events as `--mode json` on stdout (piParser); a turn ends on
 * `agent_end`.
 */
import type { SessionDriver, SessionIo } from "../types.js";
import { jsonlSessionDriver } from "./jsonl-session.js";
import { piParser } from "./pi.js";
import { obj, str } from "./shared.js";

export function piRpcDriver(io: SessionIo): SessionDriver {
  return jsonlSessionDriver(io, {
    parser: piParser,
    prompt: (message, id) => ({ id, type: "prompt", message }),
    interrupt: (id) => ({ id, type: "abort" }),
    acknowledges: true,
    open: async (command) => str(obj(await command({ type: "get_state" })).sessionId),
  });
}
