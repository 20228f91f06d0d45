import { ACP_SESSION } from "../acp.js";
import { geminiRunner } from "../clis/gemini.js";
import type { AgentCli } from "../descriptor.js";
import { geminiTui } from "../tui/gemini.js";

/** Gemini CLI: `gemini -p` one-shot, `gemini --acp` sessions, its TUI. */
export const gemini: AgentCli = { runner: geminiRunner, session: ACP_SESSION, tui: geminiTui };
