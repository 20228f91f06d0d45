import { isMusterError, type NextStep } from "../base/errors.js";
import { storageError } from "../base/storage-errors.js";

/** A tool call's arguments as hints show them: `{"id": "…", "prompt": "…"}`. */
const args = (o: Record<string, unknown>): string =>
  `{${Object.entries(o)
    .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
    .join(", ")}}`;

/**
 * A next step as a tool call. Clients spell tool names their own way (mcp__muster__subagents_run, …), so a
 * tool is named as "the subagents_x tool", never bare.
 */
export function mcpNextStep(n: NextStep): string {
  switch (n.action) {
    case "resume":
      return `continue it with the subagents_run tool: ${args({ id: n.id, prompt: "…" })}`;
    case "spawn":
      // The tool takes no cwd or argv: a new child runs where this server runs, with its profile's command.
      return `start a new one with the subagents_run tool: ${args({ agent: n.agent, prompt: "…" })}`;
    case "give_argv":
      return "give its argv as command: in its agent profile; a tool call cannot pass one";
    case "wait":
      return `wait for it with the subagents_await tool: ${args({ ids: n.ids, mode: "all" })}`;
    case "wait_or_remove":
      return "wait for it with the subagents_await tool, or cancel it with the subagents_cancel tool first";
    case "cancel":
      return "close some with the subagents_cancel tool";
    case "status":
      return `the subagents_status tool with ${args({ id: n.id })} lists its turns`;
    case "list":
      return "the subagents_status tool (no id) lists this workspace's children";
    case "agents":
      return "the subagents_agents tool lists them";
    case "primaries":
      return n.name
        ? "start this server with --primary <id> (the muster CLI's ls --all lists every primary)"
        : "the muster CLI's ls --all lists every primary";
    case "reach":
      return `it is reachable from an MCP server started with muster mcp --primary ${n.primary}`;
    case "reuse_group":
      return "reuse a groupId that is not sealed yet, or run without groupId";
    case "workflow_runs":
      return "the muster CLI's workflow runs lists them";
    default:
      return unknownStep(n);
  }
}

// Exhaustive: a new action without a case here fails `tsc`.
function unknownStep(n: never): string {
  return `(next step ${JSON.stringify(n)})`;
}

/**
 * A failed call's line: `code: message`, and the next step as a tool call when there is one; the lines that
 * back it up (a failed command's output) under it.
 */
export function mcpErrorText(thrown: unknown): string {
  const e = storageError(thrown);
  if (!isMusterError(e)) return `internal: ${(e as Error)?.message ?? String(e)}`;
  const text = `${e.code}: ${e.next ? `${e.message}; ${mcpNextStep(e.next)}` : e.message}`;
  return e.detail ? `${text}\n${e.detail}` : text;
}
