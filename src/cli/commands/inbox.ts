import type { Command } from "commander";
import type { PendingRequest } from "../../core/requests.js";
import type { MusterEvent } from "../../core/types.js";
import { shortId } from "../../util/ids.js";
import { shellQuote } from "../../util/text.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson, say, withSelf } from "../output.js";
import { treePausedLine } from "../pause-line.js";
import { visibleLine } from "../sanitize.js";

/** One pending request, one line: who asked (through whom), what, and the answers it takes. */
const requestLine = (
  r: Pick<PendingRequest, "type" | "id" | "lineage" | "agent" | "name" | "text" | "choices">,
) =>
  `${r.type} ${shortId(r.id)}  from ${r.lineage.map(shortId).join(" › ")} (${r.name ?? r.agent}): ${visibleLine(r.text)}${r.choices ? `  [${r.choices.map(visibleLine).join(", ")}]` : ""}\n`;

export function registerInbox(program: Command): void {
  common(
    program
      .command("inbox")
      .summary("completions not yet delivered, then mark them delivered; children's questions")
      .description(
        "Show the ready delivery manifest — every completion of this primary's children not yet read by result, wait or an earlier inbox — and mark it delivered (--peek leaves it). At most 128 records / 32 KiB at a time; the rest come next time. Questions children asked (muster ask) and still wait on are listed every time until answered (muster answer). --watch then prints each new question as it is asked.",
      )
      .option("--peek", "show without marking anything delivered")
      .option("--watch", "then keep printing questions as children ask them (until interrupted)"),
  ).action(async (flags: CommonOptions & { peek?: boolean; watch?: boolean }) => {
    const m = muster(flags);
    const { manifest, consume } = m.inbox();
    if (flags.json) printJson(manifest);
    else if (
      manifest.records.length === 0 &&
      manifest.waitingGroups.length === 0 &&
      manifest.requests.length === 0 &&
      !manifest.treePaused
    )
      say("nothing new\n");
    else {
      for (const r of manifest.records) {
        const out = r.output
          ? `${r.output.bytes} bytes: ${r.output.file}`
          : visibleLine(r.outputError?.message ?? r.reason ?? "");
        say(`${shortId(r.id)}  ${r.name ?? r.agent}  ${r.status}  ${out}\n`);
      }
      if (manifest.more > 0) say(withSelf(`…and ${manifest.more} more: run muster inbox again\n`));
    }
    if (!flags.json) {
      if (manifest.treePaused) say(`${treePausedLine(manifest.treePaused)}\n`);
      for (const g of manifest.waitingGroups) {
        say(
          withSelf(
            `group ${g.groupId}: ${g.settled} of ${g.members} settled${g.sealed ? "" : `, not sealed yet (seal it with: muster wait --group ${shellQuote([g.groupId])})`}\n`,
          ),
        );
      }
      for (const r of manifest.requests) say(requestLine(r));
      if (manifest.moreRequests > 0)
        say(`…and ${manifest.moreRequests} more pending requests (the oldest are listed first)\n`);
      const first = manifest.requests[0];
      if (first)
        say(
          withSelf(
            first.type === "permission"
              ? `answer with: muster allow ${shortId(first.id)} [--always] / muster deny ${shortId(first.id)}\n`
              : `answer with: muster answer ${shortId(first.id)} "<text>"\n`,
          ),
        );
    }
    if (!flags.peek) consume();
    if (flags.watch) await watchQuestions(m, !!flags.json, new Set(manifest.requests.map((r) => r.id)));
  });

  common(
    program
      .command("answer")
      .summary("answer a child's question (muster ask)")
      .description(
        "Answer a question a child asked with muster ask (muster inbox lists them): the child's muster ask prints the text and its agent goes on. A question with choices takes one of them.",
      )
      .argument(
        "<id>",
        "the question's id (its last 8 hex digits will do), or its child's id or name when it has just one",
      )
      .argument("<text>", "the answer"),
  ).action(async (id: string, text: string, flags: CommonOptions) => {
    const r = muster(flags).answer(id, text);
    if (flags.json) printJson({ answered: r.id, child: r.child });
    else say(`answered ${shortId(r.id)} (${r.name ?? r.agent} ${shortId(r.child)})\n`);
  });

  common(
    program
      .command("allow")
      .summary("allow a child's pending permission request")
      .description(
        "Allow the tool a live session's agent asked permission for (muster inbox lists the requests; MCP subagents_answer with allow, allow_always or deny does the same). --always: for the rest of its session, where the agent offers that. Unanswered requests are denied after MUSTER_PERMISSION_TIMEOUT seconds (default 600).",
      )
      .argument(
        "<id>",
        "the request's id (its last 8 hex digits will do), or its child's id or name when it has just one",
      )
      .option("--always", "allow it for the rest of the agent's session"),
  ).action(async (id: string, flags: CommonOptions & { always?: boolean }) => {
    decide(flags, id, flags.always ? "allow_always" : "allow");
  });

  common(
    program
      .command("deny")
      .summary("deny a child's pending permission request")
      .description(
        "Deny the tool a live session's agent asked permission for: the agent is told, and goes on without it.",
      )
      .argument(
        "<id>",
        "the request's id (its last 8 hex digits will do), or its child's id or name when it has just one",
      ),
  ).action(async (id: string, flags: CommonOptions) => {
    decide(flags, id, "deny");
  });
}

/** Answers a permission request; a question (muster ask) is answered with muster answer instead. */
function decide(flags: CommonOptions, id: string, answer: "allow" | "allow_always" | "deny"): void {
  const m = muster(flags);
  const r = m.answer(id, answer, "permission");
  if (flags.json) printJson({ answered: r.id, child: r.child, answer });
  else
    say(
      `${answer === "deny" ? "denied" : "allowed"} ${shortId(r.id)}: ${visibleLine(r.text)} (${r.name ?? r.agent} ${shortId(r.child)})\n`,
    );
}

/** Prints each question asked from now on, through the primary's watcher (events as they land, not a poll). */
async function watchQuestions(m: ReturnType<typeof muster>, json: boolean, seen: Set<string>): Promise<void> {
  await m.watch({
    onEvent: (_child: string, e: MusterEvent) => {
      const requestId =
        e.type === "question"
          ? e.requestId
          : e.type === "permission" && e.state === "pending"
            ? e.requestId
            : undefined;
      if (!requestId || seen.has(requestId)) return;
      seen.add(requestId);
      // Only questions still pending (asked before this watch started and answered since are not news).
      const r = m.requests().find((x) => x.id === requestId);
      if (!r) return;
      if (json) say(`${JSON.stringify(r)}\n`);
      else say(requestLine(r));
    },
  });
  await new Promise<never>(() => {});
}
