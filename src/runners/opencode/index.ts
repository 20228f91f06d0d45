import { ACP_SESSION } from "../acp.js";
import { opencodeRunner } from "../clis/opencode.js";
import type { AgentCli } from "../descriptor.js";
import { opencodeTui } from "../tui/opencode.js";

/** OpenCode: `opencode run` one-shot, `opencode acp` sessions, its TUI. */
export const opencode: AgentCli = { runner: opencodeRunner, session: ACP_SESSION, tui: opencodeTui };
