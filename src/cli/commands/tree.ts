import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson, say } from "../output.js";
import { visibleLine } from "../sanitize.js";

export function registerTree(program: Command): void {
  common(
    program
      .command("resume-tree")
      .summary("lift the tree's pause after a quota or credential error")
      .description(
        "A child whose turn failed on a provider's quota or a refused credential pauses its whole tree: running turns finish, new turns (and spawned children's first turns) wait, shown as paused in status, ls and top. This lifts the pause, once the quota or the credential is fixed; the waiting turns then start. A pause with a known reset time also lifts by itself once that time has gone by.",
      ),
  ).action((flags: CommonOptions) => {
    const m = muster(flags);
    const r = m.resumeTree();
    if (flags.json) return printJson(r);
    const p = r.resumed;
    say(
      p
        ? `resumed: the pause (${p.kind}, by ${shortId(p.child)}) is lifted: ${visibleLine(p.reason)}\n`
        : "the tree was not paused\n",
    );
  });
}
