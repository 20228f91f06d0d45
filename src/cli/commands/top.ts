import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { importWithEnv } from "../../util/terminal-env.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson, say } from "../output.js";

/** `muster top` (the supervisor) and `muster tmux-keys` (a binding that opens it in a popup). */
export function registerTop(program: Command): void {
  program
    .command("top")
    .summary("the supervisor: a live tree of this workspace's children")
    .description(
      "A live tree of the primary's children (any depth) and workflow runs, updated from their events. Keys: ↑/↓ j/k select, Enter/→ expand, v pane capture, f focus, a attach command, s send a follow-up, x cancel, X cancel the subtree, / filter, H show settled, r refresh, q/Esc quit (children keep running).",
    )
    .option("--popup", "open it in a tmux popup over the current pane")
    .option(
      "--primary <id>",
      "act for this primary: its id, the short id ls --all shows, or a unique prefix (default: MUSTER_PRIMARY, else this repository's or directory's)",
    )
    .action(async (flags: Omit<CommonOptions, "json"> & { popup?: boolean }) => {
      const m = muster(flags);
      const tui = await import("../../tui/keys.js");
      if (flags.popup) {
        const argv = tui.topArgv(process.env, m.primary);
        await m.popup({ argv, cwd: m.cwd }, { title: " muster top ", ...tui.POPUP_SIZE });
        return;
      }
      if (!process.stdin.isTTY || !process.stdout.isTTY)
        throw new MusterError("unsupported", "muster top needs a terminal (for a snapshot: muster ls)");
      // React's development build (its default without NODE_ENV) costs several times the CPU per frame, and
      // ink draws nothing live where it believes it runs under CI: both are decided when the modules load.
      const { runTop } = await importWithEnv(() => import("../../tui/run.js"), { NODE_ENV: "production" });
      await runTop(m);
    });

  common(
    program
      .command("tmux-keys")
      .summary("print (or --install) a tmux binding that opens top in a popup")
      .description(
        "Prints the tmux configuration line that binds prefix + KEY to `muster top` in a popup over the current pane; --install binds it in the tmux server this shell runs in (until that server exits).",
      )
      .option("--key <key>", "the key after the prefix", "M")
      .option("--install", "bind it now in the running tmux server ($TMUX)"),
  ).action(async (flags: CommonOptions & { key: string; install?: boolean }) => {
    const { bindingArgs, bindingLine, installBinding } = await import("../../tui/keys.js");
    const args = bindingArgs(flags.key, process.env);
    const socket = flags.install ? await installBinding(args, process.env) : undefined;
    if (flags.json)
      return printJson({ key: flags.key, line: bindingLine(args), argv: args, installed: socket ?? null });
    say(
      socket
        ? `bound prefix + ${flags.key} in the tmux server at ${socket}; for every server, add to ~/.tmux.conf:\n${bindingLine(args)}\n`
        : `# add to ~/.tmux.conf (or run: muster tmux-keys --install)\n${bindingLine(args)}\n`,
    );
  });
}
