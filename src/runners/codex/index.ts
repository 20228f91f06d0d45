import { codexRunner } from "../clis/codex.js";
import { codexAppDriver } from "../clis/codex-app.js";
import type { AgentCli } from "../descriptor.js";
import { codexTui } from "../tui/codex.js";

/** Codex: `codex exec` one-shot, `codex app-server` sessions, its TUI. */
export const codex: AgentCli = {
  runner: codexRunner,
  session: { protocol: "codex-app", driver: codexAppDriver },
  tui: codexTui,
};
