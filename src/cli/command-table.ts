/**
 * Every command module of the CLI, in the order help lists their commands, each with the top-level commands
 * (and aliases) it registers and its module loaded on demand: a command loads only its own module, not the
 * code of every other command (test/unit/command-table.test.ts holds each row to what its module registers).
 */
import type { Command } from "commander";

/** Adds one group of commands to the program. */
export type Register = (program: Command) => void;

export interface CommandModule {
  /** The top-level command names and aliases it registers. */
  names: readonly string[];
  /** Its file under src/cli/commands/ (no extension) and the function that registers it. */
  file: string;
  register: string;
  load: () => Promise<Register>;
  /**
   * It loads packages or large parts of muster when it runs (the MCP server, the TUI, workflows, the web
   * page): it runs from the split bundle, where those load only when used. The others share one module of
   * their own (scripts/bundle.mjs), which must import no package at start.
   */
  heavy?: true;
}

export const COMMAND_MODULES: readonly CommandModule[] = [
  {
    names: ["spawn"],
    file: "spawn",
    register: "registerSpawn",
    load: async () => (await import("./commands/spawn.js")).registerSpawn,
  },
  {
    names: ["ls", "list", "status", "capture"],
    file: "inspect",
    register: "registerInspect",
    load: async () => (await import("./commands/inspect.js")).registerInspect,
  },
  {
    names: ["logs"],
    file: "logs",
    register: "registerLogs",
    load: async () => (await import("./commands/logs.js")).registerLogs,
  },
  {
    names: ["wait"],
    file: "wait",
    register: "registerWait",
    load: async () => (await import("./commands/wait.js")).registerWait,
  },
  {
    names: ["result", "send", "cancel"],
    file: "act",
    register: "registerAct",
    load: async () => (await import("./commands/act.js")).registerAct,
  },
  {
    names: ["attach", "focus"],
    file: "pane",
    register: "registerPane",
    load: async () => (await import("./commands/pane.js")).registerPane,
  },
  {
    names: ["agents"],
    file: "agents",
    register: "registerAgents",
    load: async () => (await import("./commands/agents.js")).registerAgents,
  },
  {
    names: ["models"],
    file: "models",
    register: "registerModels",
    load: async () => (await import("./commands/models.js")).registerModels,
  },
  {
    names: ["inbox", "answer", "allow", "deny"],
    file: "inbox",
    register: "registerInbox",
    load: async () => (await import("./commands/inbox.js")).registerInbox,
  },
  {
    names: ["budget"],
    file: "budget",
    register: "registerBudget",
    load: async () => (await import("./commands/budget.js")).registerBudget,
  },
  {
    names: ["resume-tree"],
    file: "tree",
    register: "registerTree",
    load: async () => (await import("./commands/tree.js")).registerTree,
  },
  {
    names: ["rm"],
    file: "rm",
    register: "registerRm",
    load: async () => (await import("./commands/rm.js")).registerRm,
  },
  {
    names: ["gc"],
    file: "gc",
    register: "registerGc",
    load: async () => (await import("./commands/gc.js")).registerGc,
  },
  {
    names: ["hosts"],
    file: "hosts",
    register: "registerHosts",
    load: async () => (await import("./commands/hosts.js")).registerHosts,
  },
  {
    names: ["notify"],
    file: "notify",
    register: "registerNotify",
    load: async () => (await import("./commands/notify.js")).registerNotify,
  },
  {
    names: ["image"],
    file: "image",
    register: "registerImage",
    load: async () => (await import("./commands/image.js")).registerImage,
  },
  {
    names: ["doctor"],
    file: "doctor",
    register: "registerDoctor",
    load: async () => (await import("./commands/doctor.js")).registerDoctor,
  },
  {
    names: ["mcp"],
    file: "mcp",
    register: "registerMcp",
    load: async () => (await import("./commands/mcp.js")).registerMcp,
    heavy: true,
  },
  {
    names: ["demo"],
    file: "demo",
    register: "registerDemo",
    load: async () => (await import("./commands/demo.js")).registerDemo,
  },
  {
    names: ["workflow"],
    file: "workflow",
    register: "registerWorkflow",
    load: async () => (await import("./commands/workflow.js")).registerWorkflow,
    heavy: true,
  },
  {
    names: ["diff", "merge"],
    file: "worktree",
    register: "registerWorktree",
    load: async () => (await import("./commands/worktree.js")).registerWorktree,
  },
  {
    names: ["compare"],
    file: "best-of",
    register: "registerCompare",
    load: async () => (await import("./commands/best-of.js")).registerCompare,
  },
  {
    names: ["top", "tmux-keys"],
    file: "top",
    register: "registerTop",
    load: async () => (await import("./commands/top.js")).registerTop,
    heavy: true,
  },
  {
    names: ["web"],
    file: "web",
    register: "registerWeb",
    load: async () => (await import("./commands/web.js")).registerWeb,
    heavy: true,
  },
];

/** The module that registers the command a command line starts with, if its first word names one. */
export const moduleOf = (argv: readonly string[]): CommandModule | undefined =>
  argv[0] === undefined ? undefined : COMMAND_MODULES.find((m) => m.names.includes(argv[0]!));

/**
 * The modules a command line needs: the one that registers its first word when that names a command, else
 * all of them (help, --version, no command, an option first, an unknown command: commander must see them all to
 * answer exactly as the full program does).
 */
export function modulesFor(argv: readonly string[]): readonly CommandModule[] {
  const one = moduleOf(argv);
  return one ? [one] : COMMAND_MODULES;
}
