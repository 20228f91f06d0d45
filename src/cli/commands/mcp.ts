import type { Command } from "commander";

const HELP = `
Tools: subagents_run, subagents_await, subagents_status, subagents_result, subagents_send,
subagents_cancel, subagents_models, subagents_agents.

Configure a client (see the README for Codex, OpenCode and Gemini CLI):
  claude mcp add muster -- npx muster mcp

stdout carries only the protocol; logs go to stderr. The server stops when stdin closes;
children keep running (a cancelled subagents_run call cancels the child it started).`;

/** `muster mcp`: the MCP server on stdio, through which coding agents use muster as their subagent system. */
export function registerMcp(program: Command): void {
  program
    .command("mcp")
    .summary("serve muster to a coding agent over MCP (stdio)")
    .description(
      "Run an MCP server on stdin/stdout for coding agents (Claude Code, Codex, OpenCode, Gemini CLI, any MCP client).",
    )
    .option("--primary <id>", "act for this primary (default: MUSTER_PRIMARY, else this directory's)")
    .addHelpText("after", HELP)
    .action(async (flags: { primary?: string }) => {
      // The MCP SDK is heavy: load it only for `muster mcp`, not for every CLI call.
      const { serveStdio } = await import("../../mcp/server.js");
      await serveStdio(flags.primary ? { primary: flags.primary } : {});
    });
}
