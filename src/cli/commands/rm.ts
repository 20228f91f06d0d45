import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson } from "../output.js";
import { writeStdout } from "../stdout.js";

export function registerRm(program: Command): void {
  common(
    program
      .command("rm")
      .summary("remove settled children: pane, artifacts, conversation")
      .description(
        "Remove one or more children in one step: close an idle child's host, kill its pane, delete its artifact dir, conversation file and registry entry. A child with a running or queued turn is refused (exit 2, nothing removed) unless --force, which cancels that turn first.",
      )
      .argument("<id...>", "child ids or unique prefixes")
      .option("--force", "cancel a running or queued turn first instead of refusing"),
  ).action(async (ids: string[], flags: CommonOptions & { force?: boolean }) => {
    const removed = await muster(flags).remove(ids, flags.force ? { force: true } : {});
    if (flags.json) return printJson({ removed });
    for (const r of removed)
      writeStdout(
        `removed ${shortId(r.id)} ${r.name ?? r.agent} (was ${r.status}${r.cancelledTurn ? ", its turn cancelled" : ""})\n`,
      );
  });
}
