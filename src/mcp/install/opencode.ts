// OpenCode (1.18): mcp.muster in ~/.config/opencode/opencode.json or the project's opencode.json.
// OpenCode starts a local server with its own whole environment, so no variable needs naming.
import * as fs from "node:fs";
import * as path from "node:path";
import { type ConfigEdit, checkCommand, clone, getAt, isObject, objectAt } from "./edit.js";
import { homeOf, type InstallContext, SERVER_NAME } from "./spec.js";

const ENTRY = ["mcp", SERVER_NAME];

/** opencode.json, or opencode.jsonc when only that exists (a file with comments is refused, not rewritten). */
function configFile(dir: string): string {
  const jsonc = path.join(dir, "opencode.jsonc");
  const json = path.join(dir, "opencode.json");
  return !fs.existsSync(json) && fs.existsSync(jsonc) ? jsonc : json;
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
        e.type = "local";
        e.command = command;
        e.enabled = true;
        // OpenCode's limit for a server request is 5 s unless set: a run waits for its child.
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          e.timeout = ctx.server.timeoutSec * 1000;
        return out;
      },
      check(doc) {
        const e = getAt(doc, ENTRY);
        if (!isObject(e)) return [`no mcp.${SERVER_NAME} in ${file}`];
        const cmd = Array.isArray(e.command) ? e.command : [];
        const missing = checkCommand(cmd[0], cmd.slice(1), ctx.server);
        if (e.type !== "local") missing.push('type is not "local"');
        if (e.enabled === false) missing.push("enabled is false");
        if (!(typeof e.timeout === "number" && e.timeout >= ctx.server.timeoutSec * 1000))
          missing.push(`timeout below ${ctx.server.timeoutSec * 1000} ms (a run waits for its child)`);
        return missing;
      },
    },
  ];
}
