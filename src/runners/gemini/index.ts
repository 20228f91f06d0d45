import { ACP_SESSION } from "../acp.js";
import type { AgentCli } from "../descriptor.js";
import { geminiRunner } from "./runner.js";
import { geminiTui } from "./tui.js";

/** Gemini CLI: `gemini -p` one-shot, `gemini --acp` sessions, its TUI. */
export const gemini: AgentCli = { runner: geminiRunner, session: ACP_SESSION, tui: geminiTui };
