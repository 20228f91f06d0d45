import { Command, CommanderError } from "commander";
import { loadBackendModules } from "../mux/builtin.js";
import { CHILD_HELP } from "./child-commands.js";
import { registerAct } from "./commands/act.js";
import { registerAgents } from "./commands/agents.js";
import { registerCompare } from "./commands/best-of.js";
import { registerBudget } from "./commands/budget.js";
import { registerDemo } from "./commands/demo.js";
import { registerDoctor } from "./commands/doctor.js";
import { registerGc } from "./commands/gc.js";
import { registerHosts } from "./commands/hosts.js";
import { registerImage } from "./commands/image.js";
import { registerInbox } from "./commands/inbox.js";
import { registerInspect } from "./commands/inspect.js";
import { registerLogs } from "./commands/logs.js";
import { registerMcp } from "./commands/mcp.js";
import { registerModels } from "./commands/models.js";
import { registerNotify } from "./commands/notify.js";
import { registerPane } from "./commands/pane.js";
import { registerRm } from "./commands/rm.js";
import { registerSpawn } from "./commands/spawn.js";
import { registerTop } from "./commands/top.js";
import { registerTree } from "./commands/tree.js";
import { registerWait } from "./commands/wait.js";
import { registerWeb } from "./commands/web.js";
import { registerWorkflow } from "./commands/workflow.js";
import { registerWorktree } from "./commands/worktree.js";
import { EXIT, EXIT_TABLE } from "./exit-codes.js";
import { ExitWith, reportError } from "./output.js";

/** The whole commander program; nothing runs until it is parsed (test/unit/readme-samples.test.ts reads it). */
export function buildProgram(): Command {
  const program = new Command("muster")
    .description("Run coding-agent subagents as real processes in tmux panes, with durable artifacts.")
    .version("0.1.0")
    .showHelpAfterError("(muster <command> --help for usage)")
    .addHelpText(
      "after",
      `\n${CHILD_HELP}\n\n${EXIT_TABLE}\n\nState: $MUSTER_HOME (default \${XDG_STATE_HOME:-~/.local/state}/muster). Private tmux server: MUSTER_TMUX_SOCKET=<name>. Backend: MUSTER_BACKEND=<name> (tmux, pty, zellij; default zellij inside a Zellij session, else tmux, else pty), MUSTER_BACKEND_MODULE=<file.mjs> loads one from outside muster.`,
    );
  registerSpawn(program);
  registerInspect(program);
  registerLogs(program);
  registerWait(program);
  registerAct(program);
  registerPane(program);
  registerAgents(program);
  registerModels(program);
  registerInbox(program);
  registerBudget(program);
  registerTree(program);
  registerRm(program);
  registerGc(program);
  registerHosts(program);
  registerNotify(program);
  registerImage(program);
  registerDoctor(program);
  registerMcp(program);
  registerDemo(program);
  registerWorkflow(program);
  registerWorktree(program);
  registerCompare(program);
  registerTop(program);
  registerWeb(program);
  program.commands.forEach((c) => {
    c.exitOverride();
  });
  program.exitOverride();
  return program;
}

/** Runs the CLI and returns its exit code. */
export async function main(argv: string[]): Promise<number> {
  const dashdash = argv.indexOf("--");
  const json = (dashdash < 0 ? argv : argv.slice(0, dashdash)).includes("--json");
  try {
    // Before any command: a child of a backend from outside muster is reached only through its module.
    await loadBackendModules(process.env);
    await buildProgram().parseAsync(argv, { from: "user" });
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
