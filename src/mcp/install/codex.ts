// Codex (0.171): [mcp_servers.muster] in ~/.codex/config.toml ($CODEX_HOME) or a trusted project's
// .codex/config.toml. Codex starts the server with a cleared environment (HOME, PATH, LANG, SHELL, TERM…),
// so every variable muster or a child needs is named in env_vars; its approval policy refuses MCP calls
// in `codex exec` unless the server's tools are approved.
import * as path from "node:path";
import {
  type ConfigEdit,
  checkCommand,
  clone,
  getAt,
  isObject,
  missingFrom,
  objectAt,
  withAll,
} from "./edit.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcp_servers", SERVER_NAME];

export function codexConfigFile(ctx: Pick<InstallContext, "scope" | "env" | "cwd">): string {
  if (ctx.scope === "project") return path.join(ctx.cwd, ".codex", "config.toml");
  return path.join(ctx.env.CODEX_HOME || path.join(homeOf(ctx.env), ".codex"), "config.toml");
}

export function codexEdits(ctx: InstallContext): ConfigEdit[] {
  const file = codexConfigFile(ctx);
  return [
    {
      file,
      format: "toml",
      entryPath: ENTRY,
      merge(doc) {
        const out = clone(doc);
        const e = objectAt(out, ENTRY, file);
        e.command = ctx.server.command;
        e.args = ctx.server.args;
        e.env_vars = withAll(e.env_vars, ctx.server.envNames);
        if (!(typeof e.tool_timeout_sec === "number" && e.tool_timeout_sec >= ctx.server.timeoutSec))
          e.tool_timeout_sec = ctx.server.timeoutSec;
        e.default_tools_approval_mode = "approve";
        // Wait for the server before the first model request (an optional one is skipped after a short grace).
        e.required = true;
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no [${ENTRY.join(".")}] in ${file}`];
        const missing = checkCommand(e.command, e.args, ctx.server);
        const names = missingFrom(e.env_vars, ctx.server.envNames);
        if (names.length > 0)
          missing.push(`env_vars lacks ${names.join(", ")} (Codex clears the server's environment)`);
        if (!(typeof e.tool_timeout_sec === "number" && e.tool_timeout_sec >= ctx.server.timeoutSec))
          missing.push(`tool_timeout_sec below ${ctx.server.timeoutSec} (a run waits for its child)`);
        if (e.default_tools_approval_mode !== "approve")
          missing.push(
            'default_tools_approval_mode is not "approve" (calls are refused under approval policy never)',
          );
        if (e.required !== true)
          missing.push(
            "required is not true (under load the first turn can start before muster's tools are listed)",
          );
        return missing;
      },
    },
  ];
}
