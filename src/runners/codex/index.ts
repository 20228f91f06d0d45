import type { AgentCli } from "../descriptor.js";
import { codexAppDriver } from "./app-server.js";
import { codexRunner } from "./runner.js";
import { codexTui } from "./tui.js";

/** Codex: `codex exec` one-shot, `codex app-server` sessions, its TUI. */
export const codex: AgentCli = {
  runner: codexRunner,
  session: { protocol: "codex-app", driver: codexAppDriver },
  tui: codexTui,
};
