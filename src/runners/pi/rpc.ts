/**
 * Pi's RPC mode (`pi --mode rpc`) as a session driver: `prompt`, `abort` and `get_state` commands on stdin,
 * acknowledged by `{type: "response"}`; the same events as `--mode json` on stdout (piParser); a turn ends on
 * `agent_end`. Pi itself never asks permission; an extension may (`ctx.ui.confirm`, a permission gate): that
 * `extension_ui_request` goes to the parent as a permission request. Dialogs muster cannot answer (select,
 * input, editor) are cancelled at once, so no extension waits on a UI nobody sees.
 */

import { jsonlSessionDriver } from "../common/jsonl-session.js";
import { obj, str } from "../common/shared.js";
import type { SessionDriver, SessionIo } from "../types.js";
import { piParser } from "./runner.js";

export function piRpcDriver(io: SessionIo): SessionDriver {
  return jsonlSessionDriver(io, {
    parser: piParser,
    prompt: (message, id) => ({ id, type: "prompt", message }),
    interrupt: (id) => ({ id, type: "abort" }),
    acknowledges: true,
    open: async (command) => str(obj(await command({ type: "get_state" })).sessionId),
    request: extensionDialog,
  });
}

function extensionDialog(
  o: Record<string, unknown>,
  io: SessionIo,
): Promise<Record<string, unknown>> | undefined {
  if (o.type !== "extension_ui_request") return undefined;
  const id = str(o.id) ?? "";
  if (o.method === "confirm") {
    const what = str(o.title) ?? "an extension's confirmation";
    return io
      .askPermission(what, str(o.message))
      .then((a) => ({ type: "extension_ui_response", id, confirmed: a !== "deny" }));
  }
  if (o.method === "select" || o.method === "input" || o.method === "editor")
    return Promise.resolve({ type: "extension_ui_response", id, cancelled: true });
  // Fire-and-forget (notify, setStatus, …): nothing to answer.
  return undefined;
}
