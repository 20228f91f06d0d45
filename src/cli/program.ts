/**
 * The commander program with the given command modules registered, and one run of it. main.ts runs it with
 * the modules a command line needs; each command module's own bundle (scripts/bundle.mjs) runs it with that
 * module alone, so a command loads none of the others.
 */
import { Command, CommanderError } from "commander";
import { loadBackendModules } from "../mux/builtin.js";
import { CHILD_HELP } from "./child-commands.js";
import type { Register } from "./command-table.js";
import { EXIT, EXIT_TABLE } from "./exit-codes.js";
import { ExitWith, reportError } from "./output.js";

/** The program with these command modules registered in this order; nothing runs until it is parsed. */
export function programWith(registers: readonly Register[]): Command {
  const program = new Command("muster")
    .description("Run coding-agent subagents as real processes in tmux panes, with durable artifacts.")
    .version("0.1.0")
    .showHelpAfterError("(muster <command> --help for usage)")
    .addHelpText(
      "after",
      `\n${CHILD_HELP}\n\n${EXIT_TABLE}\n\nState: $MUSTER_HOME (default \${XDG_STATE_HOME:-~/.local/state}/muster). Private tmux server: MUSTER_TMUX_SOCKET=<name>. Backend: MUSTER_BACKEND=<name> (tmux, pty, zellij; default zellij inside a Zellij session, else tmux, else pty), MUSTER_BACKEND_MODULE=<file.mjs> loads one from outside muster.`,
    );
  for (const register of registers) register(program);
  program.commands.forEach((c) => {
    c.exitOverride();
  });
  program.exitOverride();
  return program;
}

/** Runs one command line with the command modules `load` gives and returns its exit code. */
export async function runProgram(argv: string[], load: () => Promise<readonly Register[]>): Promise<number> {
  const dashdash = argv.indexOf("--");
  const json = (dashdash < 0 ? argv : argv.slice(0, dashdash)).includes("--json");
  try {
    // Before any command: a child of a backend from outside muster is reached only through its module.
    await loadBackendModules(process.env);
    await programWith(await load()).parseAsync(argv, { from: "user" });
    return EXIT.ok;
  } catch (e) {
    if (e instanceof ExitWith) return e.exitCode;
    if (e instanceof CommanderError) {
      // Help and --version end with code 0; everything else commander rejects is a usage error.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    return reportError(e, json);
  }
}
