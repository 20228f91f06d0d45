/** `muster diff` and `muster merge`: the work of a child isolated in a git worktree (spawn --isolation worktree). */
import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { ExitWith, printAnswer, printJson, say, warn } from "../output.js";
import { visibleLine } from "../sanitize.js";

export function registerWorktree(program: Command): void {
  common(
    program
      .command("diff")
      .summary("an isolated child's changes (git diff against where it started)")
      .description(
        "Show what a child spawned with --isolation worktree changed: `git diff` of its worktree (commits and uncommitted work) against the parent's HEAD it started from.",
      )
      .argument("<id>", "child id or unique prefix")
      .option("--stat", "only the diff stat"),
  ).action(async (id: string, flags: CommonOptions & { stat?: boolean }) => {
    const d = await muster(flags).diff(id, flags.stat ? { stat: true } : {});
    if (flags.json) return printJson(d);
    if (d.problem) warn(`muster: warning: ${shortId(d.id)}: ${visibleLine(d.problem)}\n`);
    // The diff is the child's text: exact into a pipe, made visible on a terminal.
    printAnswer(d.diff);
  });

  common(
    program
      .command("merge")
      .summary("merge an isolated child's branch into this checkout")
      .description(
        "Merge the branch of a child spawned with --isolation worktree into the parent's checkout: a fast-forward when possible, else a merge commit. Work it left uncommitted is committed onto its branch first. On a conflict the merge is aborted (the checkout is unchanged), the files are named and the exit code is 1. Refused: symlinks pointing outside the checkout; without --force, a child that changed the parent's checkout during a turn or whose worktree is gone.",
      )
      .argument("<id>", "child id or unique prefix")
      .option(
        "--force",
        "merge even a child flagged for changing the parent's checkout or for a missing worktree",
      ),
  ).action(async (id: string, flags: CommonOptions & { force?: boolean }) => {
    const r = await muster(flags).merge(id, flags.force ? { force: true } : {});
    if (flags.json) printJson(r);
    else if (r.merged)
      say(`merged ${r.branch} of ${shortId(r.id)} (${r.how}); HEAD is ${r.head.slice(0, 12)}\n`);
    else
      say(
        `not merged: ${r.branch} of ${shortId(r.id)} conflicts in ${r.conflicts.map(visibleLine).join(", ")}; the merge was aborted, nothing changed\n`,
      );
    if (!r.merged) throw new ExitWith(EXIT.errored);
  });
}
