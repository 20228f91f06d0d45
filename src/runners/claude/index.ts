import { claudeRunner } from "../clis/claude.js";
import { claudeStreamDriver } from "../clis/claude-stream.js";
import type { AgentCli } from "../descriptor.js";
import { claudeTui } from "../tui/claude.js";

/** Claude Code: `claude -p` one-shot, `--input-format stream-json` sessions, its TUI. */
export const claude: AgentCli = {
  runner: claudeRunner,
  session: { protocol: "claude-stream", driver: (_spec, io) => claudeStreamDriver(io) },
  tui: claudeTui,
};
