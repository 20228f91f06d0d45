import { ACP_SESSION } from "../acp.js";
import type { AgentCli } from "../descriptor.js";
import { opencodeRunner } from "./runner.js";
import { opencodeTui } from "./tui.js";

/** OpenCode: `opencode run` one-shot, `opencode acp` sessions, its TUI. */
export const opencode: AgentCli = { runner: opencodeRunner, session: ACP_SESSION, tui: opencodeTui };
