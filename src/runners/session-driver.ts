import { acpDriver } from "./acp/driver.js";
import { claudeStreamDriver } from "./clis/claude-stream.js";
import { codexAppDriver } from "./clis/codex-app.js";
import { piRpcDriver } from "./clis/pi-rpc.js";
import type { SessionDriver, SessionIo, SessionSpec } from "./types.js";

/** The driver of a session's protocol. */
export function sessionDriver(spec: SessionSpec, io: SessionIo): SessionDriver {
  if (spec.protocol === "pi-rpc") return piRpcDriver(io);
  if (spec.protocol === "claude-stream") return claudeStreamDriver(io);
  if (spec.protocol === "codex-app") return codexAppDriver(spec, io);
  return acpDriver(spec, io);
}
