import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { helperCwd } from "../../util/cwd.js";
import { type CommonOptions, common, muster } from "../context.js";
import { shellQuote } from "../format.js";
import { ExitWith, printJson, say } from "../output.js";

/** attach and focus: inside tmux switch the current client to the pane; outside, attach this terminal. */
async function goToPane(
  name: "attach" | "focus",
  id: string,
  flags: CommonOptions & { print?: boolean },
): Promise<void> {
  const m = muster(flags);
  const target = m.attach(id);
  const { command } = target;
  if (flags.json || flags.print) {
    if (flags.json) printJson(target);
    else say(`${shellQuote(command)}\n`);
    return;
  }
  let unfocused: unknown;
  try {
    await m.focus(target.id);
    return;
  } catch (e) {
    // The pty backend has no multiplexer to focus in: `focus` says so rather than take over this terminal.
    if (name === "focus" && target.pane.backend === "pty") throw e;
    // Not inside the same tmux server: attach this terminal instead.
    unfocused = e;
  }
  const { execa } = await import("execa"); // ~150 ms to load: only when attaching
  // Inside tmux, a pane on another server (an SSH host's, a private socket's) opens in a new window of the
  // caller's session: a tmux client inside this pane would be a nested one.
  if (name === "attach" && process.env.TMUX && process.env.TMUX_PANE && target.pane.backend === "tmux") {
    const label = `attach-${target.id.slice(-8)}`;
    const r = await execa("tmux", ["new-window", "-n", label, "--", "env", "-u", "TMUX", ...command], {
      reject: false,
    });
    if (r.exitCode === 0) {
      say(`opened ${target.id.slice(-8)} in a new window of this tmux (${label})\n`);
      return;
    }
  }
  if (!process.stdin.isTTY)
    throw new MusterError("unsupported", `attaching needs a terminal; run: ${shellQuote(command)}`, {
      cause: unfocused,
    });
  const [bin, ...args] = command;
  const r = await execa(bin!, args, { cwd: helperCwd(), stdio: "inherit", reject: false });
  if (r.exitCode !== 0) throw new ExitWith(r.exitCode ?? 1);
}

export function registerPane(program: Command): void {
  for (const [name, summary] of [
    ["attach", "attach this terminal to a child's pane"],
    ["focus", "bring a child's pane to the front"],
  ] as const) {
    common(
      program
        .command(name)
        .summary(summary)
        .description(
          `${summary[0]!.toUpperCase()}${summary.slice(1)}: inside tmux it switches to the pane, outside it attaches (detach with prefix + d; from a pty child: Ctrl-\\, or the key in MUSTER_DETACH_KEY).`,
        )
        .argument("<id>", "child id or unique prefix")
        .option("--print", "print the command instead of running it"),
    ).action((id: string, flags: CommonOptions & { print?: boolean }) => goToPane(name, id, flags));
  }
}
