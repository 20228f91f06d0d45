import type { AgentCli } from "../descriptor.js";
import { piRpcDriver } from "./rpc.js";
import { piRunner } from "./runner.js";
import { piTui } from "./tui.js";

/** Pi: `pi -p` one-shot, `pi --mode rpc` sessions, its TUI. */
export const pi: AgentCli = {
  runner: piRunner,
  session: { protocol: "pi-rpc", driver: (_spec, io) => piRpcDriver(io) },
  tui: piTui,
};
