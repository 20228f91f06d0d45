import { acpRunner } from "./acp.js";
import { aiderRunner } from "./clis/aider.js";
import { claudeRunner } from "./clis/claude.js";
import { codexRunner } from "./clis/codex.js";
import { geminiRunner } from "./clis/gemini.js";
import { opencodeRunner } from "./clis/opencode.js";
import { piRunner } from "./clis/pi.js";
import { commandRunner } from "./command.js";
import { mockRunner } from "./mock.js";
import type { Runner } from "./types.js";

const RUNNERS: ReadonlyMap<string, Runner> = new Map(
  [
    mockRunner,
    commandRunner,
    claudeRunner,
    codexRunner,
    piRunner,
    opencodeRunner,
    geminiRunner,
    aiderRunner,
    acpRunner,
  ].map((r) => [r.name, r]),
);

export const runnerNames = (): string[] => [...RUNNERS.keys()];

export function getRunner(name: string): Runner | undefined {
  return RUNNERS.get(name);
}
