/** `muster notify`: where a person is told of children that wait, finish, fail, pause the tree or are lost. */
import type { Command } from "commander";
import { ExitWith, printJson, say } from "../output.js";
import { visibleLine } from "../sanitize.js";

// The notify module loads only in these commands.
const admin = () => import("../../notify/admin.js");

const jsonOption = (c: Command): Command =>
  c.option("--json", "print one JSON document on stdout, nothing else");

const EVENTS_HELP =
  "only these events, a comma list of waiting, finished, failed, paused, lost (default: all)";

export function registerNotify(program: Command): void {
  const notify = program
    .command("notify")
    .summary("push notifications when a child waits, finishes, fails, is lost or the tree pauses")
    .description(
      "Notification targets, kept in the user's config file: an ntfy topic, a webhook (the notice as JSON) or a command (the notice in its environment). They are told, in the background, when a child's agent waits on a question or a permission, when a turn finishes or fails, when a provider refusal pauses the tree, and when a child's host dies (lost). Everything is sent from this machine: by each child's host, by a place's keeper for a child on another machine (whose host has no targets and gets none of this config), by the parent that records a child lost. Each event once; each send bounded (5 s, 3 tries).",
    );

  jsonOption(
    notify
      .command("add")
      .description("add a target: ntfy <topic-url>, webhook <url>, or command -- <argv…>")
      .argument("<kind>", "ntfy, webhook or command")
      .argument("[target...]", "the URL, or the command's argv (after --)")
      .option("--events <list>", EVENTS_HELP),
  ).action(async (kind: string, target: string[], flags: { events?: string; json?: boolean }) => {
    const { addTarget, newTarget, parseEvents } = await admin();
    const t = newTarget(kind, target, parseEvents(flags.events));
    await addTarget(process.env, t);
    if (flags.json) return printJson(t);
    say(`added notification target ${t.id} (${describe(t)}); try it with: muster notify test ${t.id}\n`);
  });

  jsonOption(notify.command("ls").description("list the targets")).action(
    async (flags: { json?: boolean }) => {
      const { listTargets } = await admin();
      const all = listTargets(process.env);
      if (flags.json) return printJson({ targets: all });
      if (all.length === 0)
        return say("no notification targets; add one with: muster notify add ntfy <topic-url>\n");
      for (const t of all)
        say(`${t.id}  ${t.kind.padEnd(7)}  ${describe(t)}${t.events ? `  (${t.events.join(",")})` : ""}\n`);
    },
  );

  jsonOption(
    notify.command("rm").description("remove a target").argument("<id>", "its id (notify ls)"),
  ).action(async (id: string, flags: { json?: boolean }) => {
    const { removeTarget } = await admin();
    const { MusterError } = await import("../../base/errors.js");
    if (!(await removeTarget(process.env, id)))
      throw new MusterError("not_found", `no notification target ${id} (muster notify ls lists them)`);
    if (flags.json) return printJson({ removed: id });
    say(`removed notification target ${id}\n`);
  });

  jsonOption(
    notify
      .command("test")
      .description("send a test notice to every target (or one); exit 1 if any did not take it")
      .argument("[id]", "only this target"),
  ).action(async (id: string | undefined, flags: { json?: boolean }) => {
    const { testTargets } = await admin();
    const results = await testTargets(process.env, id);
    if (flags.json) printJson({ results });
    else if (results.length === 0)
      say("no notification targets; add one with: muster notify add ntfy <topic-url>\n");
    else
      for (const r of results)
        say(`${r.id}  ${r.kind.padEnd(7)}  ${r.ok ? "ok" : `failed: ${visibleLine(r.error ?? "")}`}\n`);
    if (results.some((r) => !r.ok)) throw new ExitWith(1);
  });
}

function describe(t: { kind: string; url?: string; argv?: string[] }): string {
  return visibleLine(t.kind === "command" ? (t.argv ?? []).join(" ") : (t.url ?? ""));
}
