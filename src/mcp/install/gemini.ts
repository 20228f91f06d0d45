// Gemini CLI (0.61): mcpServers.muster in ~/.gemini/settings.json or .gemini/settings.json. Without
// `trust` its tools are not offered in `-p` runs; it strips secret-looking variables (*KEY*, *TOKEN*,
// *AUTH*, *CERT*, …) from a server's environment unless the entry's `env` names them as "${X}".
import * as path from "node:path";
import { type ConfigEdit, checkCommand, clone, type Doc, getAt, isObject, objectAt } from "./edit.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcpServers", SERVER_NAME];
// Gemini CLI's own redaction patterns (environmentSanitization.ts) and its always-blocked names.
const REDACTED = /TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|CREDS|PRIVATE|CERT/i;
const ALWAYS_BLOCKED = new Set(["GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_ACCOUNT", "DATABASE_URL"]);

/** The names Gemini would strip, each passed through by reference: the value never lands in the file. */
export function geminiEnv(names: string[]): Record<string, string> {
  const picked = names.filter((n) => REDACTED.test(n) || ALWAYS_BLOCKED.has(n));
  return Object.fromEntries(picked.map((n) => [n, `\${${n}}`]));
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
        e.command = ctx.server.command;
        e.args = ctx.server.args;
        e.env = { ...(isObject(e.env) ? e.env : {}), ...env };
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          e.timeout = ctx.server.timeoutSec * 1000;
        e.trust = true;
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no mcpServers.${SERVER_NAME} in ${file}`];
        const missing = checkCommand(e.command, e.args, ctx.server);
        const have = (isObject(e.env) ? e.env : {}) as Doc;
        const lacking = Object.keys(env).filter((n) => have[n] !== env[n]);
        if (lacking.length > 0)
          missing.push(
            `env lacks ${lacking.join(", ")} as "\${NAME}" (Gemini strips secret-looking variables)`,
          );
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
        if (e.trust !== true) missing.push("trust is not true (the tools are not offered in -p runs)");
        return missing;
      },
    },
  ];
}
