import type { AgentCli } from "../descriptor.js";
import { claudeRunner } from "./runner.js";
import { claudeStreamDriver } from "./stream.js";
import { claudeTui } from "./tui.js";

/** Claude Code: `claude -p` one-shot, `--input-format stream-json` sessions, its TUI. */
export const claude: AgentCli = {
  runner: claudeRunner,
  session: { protocol: "claude-stream", driver: (_spec, io) => claudeStreamDriver(io) },
  tui: claudeTui,
};
