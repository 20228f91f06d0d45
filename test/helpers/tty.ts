/**
 * Runs the real CLI with a terminal on stdout and stderr: a pane of its own private tmux server, whose
 * output is copied byte for byte (pipe-pane -O) to a file before the command starts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { BIN, type Sandbox, until } from "./cli.js";
import { killServerAndWait, privateSocket } from "./tmux.js";

/** What the command wrote to its terminal (the pty turns LF into CRLF) and its exit status. */
export interface TtyRun {
  raw: Buffer;
  exitCode: number;
}

/** The sandbox's variables the CLI needs, as `env` words (the pane does not inherit the test's env). */
function envWords(sb: Sandbox): string[] {
  // The locale too: with none, tmux prints a tab in -F output as "_" (a separate issue: muster's pane-id
  // parsing then fails).
  const keep = [
    "PATH",
    "HOME",
    "XDG_CONFIG_HOME",
    "MUSTER_HOME",
    "MUSTER_TMUX_SOCKET",
    "NO_COLOR",
    "LANG",
    "LC_ALL",
  ];
  return keep.filter((k) => sb.env[k] !== undefined).map((k) => `${k}=${sb.env[k]}`);
}

export async function runOnTty(sb: Sandbox, args: string[]): Promise<TtyRun> {
  const socket = privateSocket("mt-tty");
  const out = path.join(fs.mkdtempSync(path.join(path.dirname(sb.home), "tty-")), "out");
  const tmux = (a: string[]) => execa("tmux", ["-L", socket, ...a], { stdin: "ignore", timeout: 10_000 });
  try {
    // The pane waits for a line before it runs the command, so the copy of its output is in place first.
    await tmux([
      "new-session",
      "-d",
      "-s",
      "tty",
      "-x",
      "200",
      "-y",
      "50",
      "-c",
      sb.cwd,
      "--",
      "sh",
      "-c",
      'read -r go; exec "$@"',
      "sh",
      "env",
      "-i",
      ...envWords(sb),
      process.execPath,
      BIN,
      ...args,
    ]);
    await tmux(["set-option", "-w", "-t", "tty", "remain-on-exit", "on"]);
    await tmux(["pipe-pane", "-O", "-t", "tty", `cat > '${out}'`]);
    await tmux(["send-keys", "-t", "tty", "Enter"]);
    const status = await until(async () => {
      const r = await tmux(["display-message", "-p", "-t", "tty", "#{pane_dead} #{pane_dead_status}"]);
      const [dead, code] = String(r.stdout).trim().split(" ");
      if (dead !== "1") return undefined;
      if (code) return { code: Number(code) };
      await tmux(["run-shell", "true"]); // tmux 3.3a records a dead pane's status lazily
      return undefined;
    }, 30_000);
    // pipe-pane's cat ends when the pane closes its pty; wait until the copy stops growing.
    let size = -1;
    await until(
      async () => {
        const now = fs.existsSync(out) ? fs.statSync(out).size : -1;
        const stable = now === size && now >= 0;
        size = now;
        return stable;
      },
      10_000,
      100,
    );
    return { raw: fs.readFileSync(out), exitCode: status.code };
  } finally {
    await killServerAndWait(socket);
    fs.rmSync(path.dirname(out), { recursive: true, force: true });
  }
}
