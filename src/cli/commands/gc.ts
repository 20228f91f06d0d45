import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { parseDuration, since } from "../format.js";
import { printJson, say } from "../output.js";
import { visibleLine } from "../sanitize.js";

const DEFAULT_AGE = "7d";

export function registerGc(program: Command): void {
  common(
    program
      .command("gc")
      .summary("remove settled children past an age")
      .description(
        "Remove closed or lost children whose last activity is older than --older-than (default 7d): their panes, artifact dirs, conversations and registry entries. Running children are never touched; idle ones only with --idle.",
      )
      .option("--older-than <duration>", "age of the last activity (e.g. 7d, 12h, 30m)", DEFAULT_AGE)
      .option("--dry-run", "say what would be removed, remove nothing")
      .option("--idle", "also close and remove idle children past the age"),
  ).action(async (flags: CommonOptions & { olderThan: string; dryRun?: boolean; idle?: boolean }) => {
    const report = await muster(flags).gc({
      olderThanMs: parseDuration(flags.olderThan),
      ...(flags.dryRun ? { dryRun: true } : {}),
      ...(flags.idle ? { idle: true } : {}),
    });
    if (flags.json) return printJson(report);
    const verb = report.dryRun ? "would remove" : "removed";
    for (const r of report.removed)
      say(
        `${verb} ${shortId(r.id)} ${r.name ?? r.agent} (${r.status}, last active ${since(r.lastActivity)} ago)${r.branch?.kept ? `; kept its unmerged branch ${r.branch.name}` : ""}\n`,
      );
    const recent = report.skipped.filter((s) => s.recent);
    for (const s of report.skipped) if (!s.recent) say(`kept ${shortId(s.id)}: ${visibleLine(s.why)}\n`);
    const age = flags.olderThan;
    if (recent.length > 0)
      say(
        `kept ${recent.length} active in the last ${age}${age === DEFAULT_AGE ? " (the default --older-than)" : ""}: --older-than 1h (or 0s) also takes recent ones\n`,
      );
    if (report.groupsRemoved > 0)
      say(
        `removed ${report.groupsRemoved} completion group${report.groupsRemoved === 1 ? "" : "s"} whose children are all gone\n`,
      );
    if (report.bestOfRemoved > 0)
      say(
        `removed ${report.bestOfRemoved} best-of record${report.bestOfRemoved === 1 ? "" : "s"} whose children are all gone\n`,
      );
    say(`${report.removed.length} ${verb}, ${report.skipped.length} kept\n`);
  });
}
