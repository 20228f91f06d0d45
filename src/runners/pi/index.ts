import { piRunner } from "../clis/pi.js";
import { piRpcDriver } from "../clis/pi-rpc.js";
import type { AgentCli } from "../descriptor.js";
import { piTui } from "../tui/pi.js";

/** Pi: `pi -p` one-shot, `pi --mode rpc` sessions, its TUI. */
export const pi: AgentCli = {
  runner: piRunner,
  session: { protocol: "pi-rpc", driver: (_spec, io) => piRpcDriver(io) },
  tui: piTui,
};
