/** The agent CLIs whose own TUI muster can run in the pane (`mode: tui`), by runner name. */
import { claudeTui } from "./claude.js";
import { codexTui } from "./codex.js";
import { geminiTui } from "./gemini.js";
import { opencodeTui } from "./opencode.js";
import { piTui } from "./pi.js";
import type { TuiAdapter } from "./types.js";

const ADAPTERS: Record<string, TuiAdapter> = {
  claude: claudeTui,
  codex: codexTui,
  gemini: geminiTui,
  opencode: opencodeTui,
  pi: piTui,
};

export function tuiAdapter(runner: string): TuiAdapter | undefined {
  return Object.hasOwn(ADAPTERS, runner) ? ADAPTERS[runner] : undefined;
}

/** Runner names with a TUI mode, for the error that names them. */
export const TUI_RUNNERS = (): string[] => Object.keys(ADAPTERS);
