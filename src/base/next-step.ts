/**
 * What the user can do next after an error, as data. Each front end spells it in its own words: the CLI as
 * a command line (src/cli/next-step.ts), the MCP server as a tool call (src/mcp/next-step.ts). Ids are full
 * child ids; a front end shortens them as it likes.
 */
export type NextStep =
  /** Continue the child with a new turn (`spawn --resume`, subagents_run with an id). */
  | { action: "resume"; id: string }
  /** Start a new child of this agent instead; `cwd` when not where the caller is, `argv` for a command child. */
  | { action: "spawn"; agent: string; cwd?: string; argv?: string[] }
  /** A command child needs its argv: give one (after `--` on the CLI, `command:` in its profile). */
  | { action: "give_argv"; agent?: string }
  /** Wait for the children's current turns. */
  | { action: "wait"; ids: string[] }
  /** The children have active turns: wait for them, or cancel and remove them. */
  | { action: "wait_or_remove"; ids: string[] }
  /** Close a live child to make room. */
  | { action: "cancel" }
  /** The child's turns are listed by its status. */
  | { action: "status"; id: string }
  /** This workspace's children are listed. */
  | { action: "list" }
  /** The agents are listed. */
  | { action: "agents" }
  /** Every primary is listed; `name: true` when the call must name one (--primary). */
  | { action: "primaries"; name?: boolean }
  /** The child belongs to another primary: reach it through that one. `ref` is the id as the user gave it. */
  | { action: "reach"; primary: string; ref: string }
  /** No more groups can be made: join one that is not sealed, or start the child without a group. */
  | { action: "reuse_group" }
  /** This primary's workflow runs are listed (no tool lists them: the CLI does). */
  | { action: "workflow_runs" };

export type NextAction = NextStep["action"];

/** Every action, for front ends and tests that must cover each one (`satisfies`: none missing, none extra). */
export const NEXT_ACTIONS = Object.keys({
  resume: 0,
  spawn: 0,
  give_argv: 0,
  wait: 0,
  wait_or_remove: 0,
  cancel: 0,
  status: 0,
  list: 0,
  agents: 0,
  primaries: 0,
  reach: 0,
  reuse_group: 0,
  workflow_runs: 0,
} satisfies Record<NextAction, 0>) as NextAction[];
