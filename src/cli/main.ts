import type { Command } from "commander";
import { COMMAND_MODULES, type CommandModule, modulesFor } from "./command-table.js";
import { programWith, runProgram } from "./program.js";

const loadAll = (modules: readonly CommandModule[]) => Promise.all(modules.map((m) => m.load()));

/** The whole commander program; nothing runs until it is parsed (test/unit/readme-samples.test.ts reads it). */
export async function buildProgram(): Promise<Command> {
  return programWith(await loadAll(COMMAND_MODULES));
}

/** Runs the CLI and returns its exit code; only the command modules the command line needs are loaded. */
export function main(argv: string[]): Promise<number> {
  return runProgram(argv, () => loadAll(modulesFor(argv)));
}

/** bin/muster.js installs the CLI's Ctrl-C handler once the CLI has loaded. */
export { installInterrupt } from "./interrupt.js";
