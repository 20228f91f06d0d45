import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { shellQuote } from "../../util/text.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson, say, withSelf } from "../output.js";
import { visibleLine } from "../sanitize.js";

export function registerInbox(program: Command): void {
  common(
    program
      .command("inbox")
      .summary("completions not yet delivered, then mark them delivered")
      .description(
        "Show the ready delivery manifest — every completion of this primary's children not yet read by result, wait or an earlier inbox — and mark it delivered (--peek leaves it). At most 128 records / 32 KiB at a time; the rest come next time.",
      )
      .option("--peek", "show without marking anything delivered"),
  ).action(async (flags: CommonOptions & { peek?: boolean }) => {
    const { manifest, consume } = muster(flags).inbox();
    if (flags.json) printJson(manifest);
    else if (manifest.records.length === 0 && manifest.waitingGroups.length === 0) say("nothing new\n");
    else {
      for (const r of manifest.records) {
        const out = r.output
          ? `${r.output.bytes} bytes: ${r.output.file}`
          : visibleLine(r.outputError?.message ?? r.reason ?? "");
        say(`${shortId(r.id)}  ${r.agent}  ${r.status}  ${out}\n`);
      }
      if (manifest.more > 0) say(withSelf(`…and ${manifest.more} more: run muster inbox again\n`));
    }
    if (!flags.json) {
      for (const g of manifest.waitingGroups) {
        say(
          withSelf(
            `group ${g.groupId}: ${g.settled} of ${g.members} settled${g.sealed ? "" : `, not sealed yet (seal it with: muster wait --group ${shellQuote([g.groupId])})`}\n`,
          ),
        );
      }
    }
    // Fault injection for the delivery tests: die after handing the manifest on, before the receipts.
    if (process.env.MUSTER_FAULT === "inbox-before-receipt") process.kill(process.pid, "SIGKILL");
    if (!flags.peek) consume();
  });
}
