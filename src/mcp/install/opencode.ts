// OpenCode (1.18): mcp.muster in ~/.config/opencode/opencode.json or the project's opencode.json.
// OpenCode starts a local server with its own whole environment, so no variable needs naming. The HTTP form
// is `"type": "remote"`; OpenCode replaces "{env:X}" anywhere in its config text with X's value as it reads it.
import * as fs from "node:fs";
import * as path from "node:path";
import { type ConfigEdit, checkCommand, clone, type Doc, getAt, isObject, objectAt } from "./edit.js";
import {
  bearer,
  checkAuthorization,
  checkUrl,
  dropKeys,
  httpFormNote,
  withAuthorization,
} from "./http-form.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcp", SERVER_NAME];
const LOCAL_KEYS = ["command", "environment", "cwd"];
const REMOTE_KEYS = ["url", "headers", "oauth"];

/** opencode.json, or opencode.jsonc when only that exists (a file with comments is refused, not rewritten). */
function configFile(dir: string): string {
  const jsonc = path.join(dir, "opencode.jsonc");
  const json = path.join(dir, "opencode.json");
  return !fs.existsSync(json) && fs.existsSync(jsonc) ? jsonc : json;
}

function checkForm(e: Doc, ctx: InstallContext): string[] {
  if (ctx.http) {
    const missing = checkUrl(e, "url", ctx.http);
    if (e.type !== "remote" && e.command === undefined) missing.push('type is not "remote"');
    missing.push(...checkAuthorization(e.headers, ctx.http, bearer(ctx.http.tokenEnv, "opencode")));
    return missing;
  }
  const cmd = Array.isArray(e.command) ? e.command : [];
  const missing = checkCommand(cmd[0], cmd.slice(1), ctx.server);
  if (e.type !== "local") missing.push('type is not "local"');
  return missing;
}

export function opencodeEdits(ctx: InstallContext): ConfigEdit[] {
  const dir =
    ctx.scope === "project"
      ? ctx.cwd
      : path.join(ctx.env.XDG_CONFIG_HOME || path.join(homeOf(ctx.env), ".config"), "opencode");
  const file = configFile(dir);
  const command = [ctx.server.command, ...ctx.server.args];
  return [
    {
      file,
      format: "json",
      entryPath: ENTRY,
      merge(doc) {
        const out = clone(doc);
        const e = objectAt(out, ENTRY, file);
        if (ctx.http) {
          dropKeys(e, LOCAL_KEYS);
          e.type = "remote";
          e.url = ctx.http.url;
          e.headers = withAuthorization(e.headers, bearer(ctx.http.tokenEnv, "opencode"));
          // muster's server takes a bearer token, never OAuth: no OAuth discovery on a refused request.
          e.oauth = false;
        } else {
          dropKeys(e, REMOTE_KEYS);
          e.type = "local";
          e.command = command;
        }
        e.enabled = true;
        // OpenCode's limit for a server request is 5 s unless set: a run waits for its child.
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          e.timeout = ctx.server.timeoutSec * 1000;
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no mcp.${SERVER_NAME} in ${file}`];
        if (!ctx.http && e.type === "remote") return httpFormNote("opencode", e.url);
        const missing = checkForm(e, ctx);
        if (e.enabled === false) missing.push("enabled is false");
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
        return missing;
      },
    },
  ];
}
