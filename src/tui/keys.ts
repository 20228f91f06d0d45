import { execFile } from "node:child_process";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { forwardedNames, setting } from "../base/settings/resolve.js";
import { PACKAGE_ROOT } from "../util/pkg.js";

/** What a popup must carry: tmux runs its command with the server's environment, not the caller's. */
const FORWARDED = [...forwardedNames("popup"), "XDG_STATE_HOME", "XDG_CONFIG_HOME", "NO_COLOR"];

/** argv that runs `muster top` (for this primary, when given) with the caller's muster settings. */
export function topArgv(env: NodeJS.ProcessEnv, primary?: string): string[] {
  const vars = FORWARDED.filter((k) => env[k] !== undefined).map((k) => `${k}=${env[k]}`);
  return [
    ...(vars.length > 0 ? ["env", ...vars] : []),
    process.execPath,
    path.join(PACKAGE_ROOT, "bin", "muster.js"),
    "top",
    ...(primary ? ["--primary", primary] : []),
  ];
}

export const POPUP_SIZE = { width: "90%", height: "90%" };

/** The tmux command that binds `prefix + key` to top in a popup over the current pane, in its directory. */
export function bindingArgs(key: string, env: NodeJS.ProcessEnv): string[] {
  if (!/^[A-Za-z0-9]$|^[MC]-[A-Za-z0-9]$|^F([1-9]|1[0-2])$/.test(key))
    throw new MusterError("invalid_argument", `key "${key}" is not a plain key such as M, C-m, M-t or F5`);
  const popup = ["display-popup", "-E", "-w", POPUP_SIZE.width, "-h", POPUP_SIZE.height];
  // The workspace (and so the primary) is the one of the pane the popup opens over: a MUSTER_PRIMARY of the
  // shell that made the binding would tie every pane of the server to that one primary.
  const { MUSTER_PRIMARY: _shellPrimary, ...settings } = env;
  return ["bind-key", key, ...popup, "-d", "#{pane_current_path}", "--", ...topArgv(settings)];
}

/** One word for tmux's configuration language: bare when plain, else quoted. */
export function configWord(w: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w)) return w;
  if (!w.includes("'")) return `'${w}'`;
  return `"${w.replace(/[\\"$~]/g, (c) => `\\${c}`)}"`;
}

/** The line to put in ~/.tmux.conf. */
export const bindingLine = (args: string[]): string => args.map(configWord).join(" ");

/** Installs the binding in the tmux server this process runs inside ($TMUX), and only there. */
export async function installBinding(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const socket = /^(.+),\d+,-?\d+$/.exec(env.TMUX ?? "")?.[1];
  if (!socket)
    throw new MusterError(
      "unsupported",
      "not inside tmux: run `muster tmux-keys --install` in a tmux pane, or add the printed line to ~/.tmux.conf",
    );
  const bin = setting(env, "tmuxBin");
  await new Promise<void>((resolve, reject) =>
    execFile(bin, ["-S", socket, ...args], { timeout: 5000 }, (e, _out, stderr) =>
      e
        ? reject(
            new MusterError(
              "mux_unavailable",
              `tmux bind-key failed: ${String(stderr).trim() || e.message}`,
              {
                cause: e,
              },
            ),
          )
        : resolve(),
    ),
  );
  return socket;
}
