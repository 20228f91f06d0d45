/** Which backend new children start in when MUSTER_BACKEND does not say: a multiplexer if there is one. */
import * as fs from "node:fs";
import * as path from "node:path";
import { rawSetting } from "../base/settings/resolve.js";

/** Whether an executable `bin` is in one of PATH's folders (without PATH, where execvp looks then). */
export function onPath(bin: string, env: NodeJS.ProcessEnv): boolean {
  for (const d of (env.PATH ?? "/usr/bin:/bin").split(path.delimiter)) {
    if (!d || !path.isAbsolute(d)) continue;
    try {
      fs.accessSync(path.join(d, bin), fs.constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/**
 * Inside a Zellij session, Zellij (when a backend for it is registered); else tmux where it exists (or
 * MUSTER_TMUX_BIN names it); else Zellij where it exists; else muster's own pty backend; tmux (whose
 * absence a spawn then reports) when not even that is registered.
 */
export function autoBackendName(env: NodeJS.ProcessEnv, registered: (name: string) => boolean): string {
  if (env.ZELLIJ && registered("zellij")) return "zellij";
  if (rawSetting(env, "tmuxBin") || onPath("tmux", env)) return "tmux";
  if (onPath("zellij", env) && registered("zellij")) return "zellij";
  return registered("pty") ? "pty" : "tmux";
}
