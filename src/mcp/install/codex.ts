// Codex (0.171): [mcp_servers.muster] in ~/.codex/config.toml ($CODEX_HOME) or a trusted project's
// .codex/config.toml. Codex starts the server with a cleared environment (HOME, PATH, LANG, SHELL, TERM…),
// so every variable muster or a child needs is named in env_vars; its approval policy refuses MCP calls
// in `codex exec` unless the server's tools are approved. The HTTP form is `url` with
// `bearer_token_env_var`, the variable Codex reads the token from; a table with both `command` and `url`
// does not load, so a switch drops the other form's keys.
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
import { checkUrl, dropKeys, httpFormNote } from "./http-form.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcp_servers", SERVER_NAME];
const STDIO_KEYS = ["command", "args", "env_vars", "env", "cwd"];
const HTTP_KEYS = ["url", "bearer_token_env_var", "bearer_token", "http_headers", "env_http_headers"];

export function codexConfigFile(ctx: Pick<InstallContext, "scope" | "env" | "cwd">): string {
  if (ctx.scope === "project") return path.join(ctx.cwd, ".codex", "config.toml");
  return path.join(ctx.env.CODEX_HOME || path.join(homeOf(ctx.env), ".codex"), "config.toml");
}

function merged(e: Doc, ctx: InstallContext): void {
  if (ctx.http) {
    dropKeys(e, STDIO_KEYS);
    e.url = ctx.http.url;
    e.bearer_token_env_var = ctx.http.tokenEnv;
  } else {
    dropKeys(e, HTTP_KEYS);
    e.command = ctx.server.command;
    e.args = ctx.server.args;
    e.env_vars = withAll(e.env_vars, ctx.server.envNames);
  }
  if (!(typeof e.tool_timeout_sec === "number" && e.tool_timeout_sec >= ctx.server.timeoutSec))
    e.tool_timeout_sec = ctx.server.timeoutSec;
  e.default_tools_approval_mode = "approve";
  // Wait for the server before the first model request (an optional one is skipped after a short grace).
  e.required = true;
}

function checkForm(e: Doc, ctx: InstallContext): string[] {
  if (ctx.http) {
    const missing = checkUrl(e, "url", ctx.http);
    if (e.bearer_token_env_var !== ctx.http.tokenEnv)
      missing.push(`bearer_token_env_var is not "${ctx.http.tokenEnv}" (the variable with the token)`);
    return missing;
  }
  const missing = checkCommand(e.command, e.args, ctx.server);
  const names = missingFrom(e.env_vars, ctx.server.envNames);
  if (names.length > 0)
    missing.push(`env_vars lacks ${names.join(", ")} (Codex clears the server's environment)`);
  return missing;
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
        merged(objectAt(out, ENTRY, file), ctx);
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no [${ENTRY.join(".")}] in ${file}`];
        if (!ctx.http && e.command === undefined && e.url !== undefined) return httpFormNote("codex", e.url);
        const missing = checkForm(e, ctx);
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
