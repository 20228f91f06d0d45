import { acpDriver } from "./acp/driver.js";
import { piRpcDriver } from "./clis/pi-rpc.js";
import type { SessionDriver, SessionIo, SessionSpec } from "./types.js";

/** The driver of a session's protocol. */
export function sessionDriver(spec: SessionSpec, io: SessionIo): SessionDriver {
  return spec.protocol === "pi-rpc" ? piRpcDriver(io) : acpDriver(spec, io);
}
