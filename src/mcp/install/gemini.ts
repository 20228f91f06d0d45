// Gemini CLI (0.61): mcpServers.muster in ~/.gemini/settings.json or .gemini/settings.json. Without
// `trust` its tools are not offered in `-p` runs; it strips secret-looking variables (*KEY*, *TOKEN*,
// *AUTH*, *CERT*, …) from a server's environment unless the entry's `env` names them as "${X}".
// The HTTP form is `"type": "http"` with `url` (0.61 calls `httpUrl` deprecated, and prefers it when both
// are there); Gemini expands "${X}" in every string of its settings as it reads them, headers included.
import * as path from "node:path";
import { type ConfigEdit, checkCommand, clone, type Doc, getAt, isObject, objectAt } from "./edit.js";
import {
  bearer,
  checkAuthorization,
  checkUrl,
  dropKeys,
  httpFormNote,
  normalUrl,
  withAuthorization,
} from "./http-form.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcpServers", SERVER_NAME];
// Gemini CLI's own redaction patterns (environmentSanitization.ts) and its always-blocked names.
const REDACTED = /TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|PRIVATE|CERT/i;
const ALWAYS_BLOCKED = new Set(["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_ACCOUNT", "DATABASE_URL"]);
const STDIO_KEYS = ["command", "args", "env", "cwd"];
const HTTP_KEYS = ["url", "httpUrl", "headers"];

/** The names Gemini would strip, each passed through by reference: the value never lands in the file. */
export function geminiEnv(names: string[]): Record<string, string> {
  const picked = names.filter((n) => REDACTED.test(n) || ALWAYS_BLOCKED.has(n));
  return Object.fromEntries(picked.map((n) => [n, `\${${n}}`]));
}

function checkForm(e: Doc, ctx: InstallContext, env: Record<string, string>): string[] {
  if (ctx.http) {
    // `httpUrl` wins over `url` in Gemini: when present, it is the one that must match.
    const key = e.httpUrl !== undefined ? "httpUrl" : "url";
    const missing = checkUrl(e, key, ctx.http);
    if (key === "url" && normalUrl(e.url) !== undefined && e.type !== "http")
      missing.push('type is not "http" (Gemini would try Streamable HTTP, then SSE)');
    missing.push(...checkAuthorization(e.headers, ctx.http, bearer(ctx.http.tokenEnv, "dollar")));
    return missing;
  }
  const missing = checkCommand(e.command, e.args, ctx.server);
  const have = (isObject(e.env) ? e.env : {}) as Doc;
  const lacking = Object.keys(env).filter((n) => have[n] !== env[n]);
  if (lacking.length > 0)
    missing.push(`env lacks ${lacking.join(", ")} as "\${NAME}" (Gemini strips secret-looking variables)`);
  return missing;
}

export function geminiEdits(ctx: InstallContext): ConfigEdit[] {
  const base = ctx.scope === "project" ? ctx.cwd : homeOf(ctx.env);
  const file = path.join(base, ".gemini", "settings.json");
  const env = geminiEnv(ctx.server.envNames);
  return [
    {
      file,
      format: "json",
      entryPath: ENTRY,
      merge(doc) {
        const out = clone(doc);
        const e = objectAt(out, ENTRY, file);
        if (ctx.http) {
          dropKeys(e, STDIO_KEYS);
          delete e.httpUrl;
          e.type = "http";
          e.url = ctx.http.url;
          e.headers = withAuthorization(e.headers, bearer(ctx.http.tokenEnv, "dollar"));
        } else {
          dropKeys(e, HTTP_KEYS);
          if (e.type !== undefined && e.type !== "stdio") delete e.type;
          e.command = ctx.server.command;
          e.args = ctx.server.args;
          e.env = { ...(isObject(e.env) ? e.env : {}), ...env };
        }
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          e.timeout = ctx.server.timeoutSec * 1000;
        e.trust = true;
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no mcpServers.${SERVER_NAME} in ${file}`];
        if (!ctx.http && e.command === undefined && (e.url ?? e.httpUrl) !== undefined)
          return httpFormNote("gemini", e.httpUrl ?? e.url);
        const missing = checkForm(e, ctx, env);
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
        if (e.trust !== true) missing.push("trust is not true (the tools are not offered in -p runs)");
        return missing;
      },
    },
  ];
}
