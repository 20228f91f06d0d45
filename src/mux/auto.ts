/** Which backend new children start in when MUSTER_BACKEND does not say: a multiplexer if there is one. */
import * as fs from "node:fs";
import * as path from "node:path";

/** Whether an executable `bin` is in one of PATH's folders. */
export function onPath(bin: string, env: NodeJS.ProcessEnv): boolean {
  for (const d of (env.PATH ?? "").split(path.delimiter)) {
    if (!d || !path.isAbsolute(d)) continue;
    try {
      fs.accessSync(path.join(d, bin), fs.constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}

/**
 * tmux where it exists (or MUSTER_TMUX_BIN names it); else Zellij where it exists and a backend for it is
 * registered; else muster's own pty backend; tmux (whose absence the spawn then reports) without that.
 */
export function autoBackendName(env: NodeJS.ProcessEnv, registered: (name: string) => boolean): string {
  if (env.MUSTER_TMUX_BIN || onPath("tmux", env)) return "tmux";
  if ((env.ZELLIJ || onPath("zellij", env)) && registered("zellij")) return "zellij";
  return registered("pty") ? "pty" : "tmux";
}
