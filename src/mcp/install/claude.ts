// Claude Code (2.1.x): servers in ~/.claude.json (user) or .mcp.json (project), permissions in settings.
// Claude Code starts a stdio server with its own whole environment, so no variable needs naming. The HTTP
// form's headers take "${NAME}", which Claude Code expands from its environment when it connects.
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
import {
  bearer,
  checkAuthorization,
  checkUrl,
  dropKeys,
  httpFormNote,
  withAuthorization,
} from "./http-form.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

/** The permission rule that lets every muster tool run without a prompt (`-p` refuses what would prompt). */
export const CLAUDE_ALLOW = `mcp__${SERVER_NAME}`;

// Each form's own keys, dropped when an install switches the entry to the other form.
const STDIO_KEYS = ["command", "args", "env"];
const HTTP_KEYS = ["url", "headers", "headersHelper", "oauth"];

const common = (ctx: InstallContext): Doc => ({
  // Hard per-call limit in ms (a run waits for its child; progress does not extend it).
  timeout: ctx.server.timeoutSec * 1000,
  // Offer muster's tools in every request instead of deferring them behind ToolSearch.
  alwaysLoad: true,
});

function merged(entry: Doc, ctx: InstallContext): void {
  if (ctx.http) {
    dropKeys(entry, STDIO_KEYS);
    const auth = withAuthorization(entry.headers, bearer(ctx.http.tokenEnv, "dollar"));
    Object.assign(entry, { type: "http", url: ctx.http.url, headers: auth }, common(ctx));
  } else {
    dropKeys(entry, HTTP_KEYS);
    Object.assign(entry, { type: "stdio", command: ctx.server.command, args: ctx.server.args }, common(ctx));
  }
}

function checkEntry(e: Doc, ctx: InstallContext): string[] {
  const http = ctx.http;
  if (!http && e.command === undefined && e.url !== undefined) return httpFormNote("claude", e.url);
  if (!http) return [...checkCommand(e.command, e.args, ctx.server), ...checkCommon(e, ctx)];
  const missing = checkUrl(e, "url", http);
  // Claude Code reads "streamable-http" as "http".
  if (e.command === undefined && e.type !== "http" && e.type !== "streamable-http")
    missing.push('type is not "http"');
  missing.push(...checkAuthorization(e.headers, http, bearer(http.tokenEnv, "dollar")));
  return [...missing, ...checkCommon(e, ctx)];
}

function checkCommon(e: Doc, ctx: InstallContext): string[] {
  const missing: string[] = [];
  if (typeof e.timeout !== "number" || e.timeout < ctx.server.timeoutSec * 1000)
    missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
  if (e.alwaysLoad !== true) missing.push("alwaysLoad is not true (tools deferred behind ToolSearch)");
  return missing;
}

function serversEdit(file: string, ctx: InstallContext): ConfigEdit {
  return {
    file,
    format: "json",
    entryPath: ["mcpServers", SERVER_NAME],
    merge(doc) {
      const out = clone(doc);
      merged(objectAt(out, ["mcpServers", SERVER_NAME], file), ctx);
      return out;
    },
    check(doc) {
      const e = getAt(doc, ["mcpServers", SERVER_NAME]);
      if (!isObject(e)) return [`no mcpServers.${SERVER_NAME} in ${file}`];
      return checkEntry(e, ctx);
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
