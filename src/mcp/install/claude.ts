// Claude Code (2.1.x): servers in ~/.claude.json (user) or .mcp.json (project), permissions in settings.
// Claude Code starts a stdio server with its own whole environment, so no variable needs naming.
import * as path from "node:path";
import {
  type ConfigEdit,
  checkCommand,
  clone,
  type Doc,
  getAt,
  isObject,
  missingFrom,
  objectAt,
  withAll,
} from "./edit.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

/** The permission rule that lets every muster tool run without a prompt (`-p` refuses what would prompt). */
export const CLAUDE_ALLOW = `mcp__${SERVER_NAME}`;

function serverEntry(ctx: InstallContext): Doc {
  return {
    type: "stdio",
    command: ctx.server.command,
    args: ctx.server.args,
    // Hard per-call limit in ms (a run waits for its child; progress does not extend it).
    timeout: ctx.server.timeoutSec * 1000,
    // Offer muster's tools in every request instead of deferring them behind ToolSearch.
    alwaysLoad: true,
  };
}

function serversEdit(file: string, ctx: InstallContext): ConfigEdit {
  const want = serverEntry(ctx);
  return {
    file,
    format: "json",
    entryPath: ["mcpServers", SERVER_NAME],
    merge(doc) {
      const out = clone(doc);
      const entry = objectAt(out, ["mcpServers", SERVER_NAME], file);
      Object.assign(entry, want);
      return out;
    },
    check(doc) {
      const e = getAt(doc, ["mcpServers", SERVER_NAME]);
      if (!isObject(e)) return [`no mcpServers.${SERVER_NAME} in ${file}`];
      const missing = checkCommand(e.command, e.args, ctx.server);
      if (typeof e.timeout !== "number" || e.timeout < ctx.server.timeoutSec * 1000)
        missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
      if (e.alwaysLoad !== true) missing.push("alwaysLoad is not true (tools deferred behind ToolSearch)");
      return missing;
    },
  };
}

/** Settings: the permission rule, and for a project's .mcp.json the approval of the server itself. */
function settingsEdit(file: string, project: boolean): ConfigEdit {
  return {
    file,
    format: "json",
    // The whole (small) settings file: --dry-run shows the permission rule and the approval together.
    entryPath: [],
    merge(doc) {
      const out = clone(doc);
      const perms = objectAt(out, ["permissions"], file);
      perms.allow = withAll(perms.allow, [CLAUDE_ALLOW]);
      if (project) out.enabledMcpjsonServers = withAll(out.enabledMcpjsonServers, [SERVER_NAME]);
      return out;
    },
    check(doc) {
      const missing = missingFrom(getAt(doc, ["permissions", "allow"]), [CLAUDE_ALLOW]).map(
        (r) => `permissions.allow lacks "${r}" in ${file} (calls would be refused)`,
      );
      if (project && doc.enableAllProjectMcpServers !== true)
        missing.push(
          ...missingFrom(doc.enabledMcpjsonServers, [SERVER_NAME]).map(
            (s) => `enabledMcpjsonServers lacks "${s}" in ${file} (the .mcp.json server stays unapproved)`,
          ),
        );
      return missing;
    },
  };
}

export function claudeEdits(ctx: InstallContext): ConfigEdit[] {
  const configDir = ctx.env.CLAUDE_CONFIG_DIR;
  if (ctx.scope === "project")
    return [
      serversEdit(path.join(ctx.cwd, ".mcp.json"), ctx),
      settingsEdit(path.join(ctx.cwd, ".claude", "settings.local.json"), true),
    ];
  return [
    serversEdit(path.join(configDir || homeOf(ctx.env), ".claude.json"), ctx),
    settingsEdit(path.join(configDir || path.join(homeOf(ctx.env), ".claude"), "settings.json"), false),
  ];
}
