import type { Command } from "commander";
import type { LoadedChild } from "../../core/children.js";
import { backendNameOf, paneWhere, placeNameOf } from "../../core/panes.js";
import { lastSnapshot } from "../../core/snapshot.js";
import { lastCompletion, type QueuedTurn, queuedTurns, resumable } from "../../core/state.js";
import { formatUsd } from "../../util/cost.js";
import { agentSessionJson, agentSessionLines } from "../agent-session.js";
import { type CommonOptions, common, muster } from "../context.js";
import { clip, humanDuration, parsePositiveInt, shellQuote, since } from "../format.js";
import { lsTable } from "../ls-table.js";
import { watchList } from "../ls-watch.js";
import { printJson, say, withSelf } from "../output.js";
import { visibleLine } from "../sanitize.js";

/** "N malformed line(s) at offset …" for events.ndjson (the spans are skipped by every reader). */
function malformedLine(m: LoadedChild["malformed"]): string {
  const spans = m.spans.map((s) => `${s.offset} (${s.length} B: ${clip(s.reason, 60)})`).join(", ");
  const more = m.count > m.spans.length ? `, and ${m.count - m.spans.length} more` : "";
  return `${m.count} malformed line${m.count === 1 ? "" : "s"} at offset ${spans}${more}`;
}

/** The JSON shape of an unreadable child in ls (its files were refused: nothing else is known). */
const unreadableSummary = (c: LoadedChild) => ({ id: c.entry.id, status: c.status, error: c.unreadable });

/** The JSON shape of a child in ls/status. */
export function childSummary(c: LoadedChild) {
  const last = lastCompletion(c.state);
  // A closed child has no pane to watch or attach to: its ref would only point at a pane that is gone.
  const closed = c.status === "closed";
  return {
    id: c.entry.id,
    ...(c.name !== undefined ? { name: c.name } : {}),
    agent: c.entry.agent,
    runner: c.entry.runner,
    status: c.status,
    live: c.live,
    lastOutcome: last?.status ?? null,
    createdAt: c.entry.createdAt,
    parent: c.entry.parent,
    cwd: c.entry.cwd,
    turns: c.state.turns.length,
    queuedTurns: queuedTurns(c.state, c.pending),
    lastActivity: c.state.lastActivity ?? null,
    usage: c.state.usage ?? null,
    backend: backendNameOf(c.entry),
    place: placeNameOf(c.entry),
    pane: closed ? null : c.entry.pane,
    paneClosed: closed,
    artifactDir: c.files.dir,
    resumable: resumable(c.state),
  };
}

const WAITING_FOR = {
  host: "waiting for the child host to start",
  slot: "waiting for a run slot",
  turn: "waiting for the turns ahead",
};

/** One queued turn in `status`: numbered on from the turns that started (the one it will be), id, what it waits for. */
const queuedLine = (q: QueuedTurn, started: number): string =>
  `  ${started + q.position}. ${q.turnId}  queued · ${WAITING_FOR[q.waitingFor]}`;

export function registerInspect(program: Command): void {
  common(
    program
      .command("ls")
      .alias("list")
      .summary("list this workspace's children")
      .description(
        "List the children of this primary (or of every primary with --all): status, agent, age and last activity.",
      )
      .option("--all", "children of every primary, grouped by primary")
      .option(
        "-w, --watch",
        "keep the list on screen, redrawn as children change, until Ctrl-C (not a terminal: the list again after each change; with --all: the primaries there are now)",
      ),
  ).action(async (flags: CommonOptions & { all?: boolean; watch?: boolean }) => {
    const m = muster(flags);
    if (flags.watch) return watchList(m, flags);
    const groups = flags.all ? await m.listAll() : [{ primary: m.primary, children: await m.list() }];
    if (flags.json) {
      const shaped = groups.map((g) => ({
        primary: g.primary,
        children: g.children.map((c) =>
          c.unreadable !== undefined ? unreadableSummary(c) : childSummary(c),
        ),
      }));
      return printJson(flags.all ? { primaries: shaped } : shaped[0]);
    }
    if (groups.every((g) => g.children.length === 0)) {
      say(withSelf('no children yet — try: muster spawn --agent mock "hello"\n'));
      return;
    }
    say(`${lsTable(groups, m.primary, !!flags.all)}\n`);
  });

  common(
    program.command("status").summary("one child in detail").argument("<id>", "child id or unique prefix"),
  ).action(async (id: string, flags: CommonOptions) => {
    const m = muster(flags);
    const c = await m.status(id);
    const summary = childSummary(c);
    const turns = c.state.turns.map((t) => ({
      turnId: t.turnId,
      n: t.n,
      source: t.source,
      startedAt: t.startedAt,
      promptBytes: t.promptBytes,
      status: t.completion?.status ?? "running",
      durationMs: t.completion?.durationMs ?? null,
      output: t.completion?.output ?? null,
      outputError: t.completion?.outputError ?? null,
      reason: t.completion?.reason ?? null,
    }));
    const attach = summary.paneClosed ? null : m.attachCommand(c);
    const snapshot = lastSnapshot(c);
    if (flags.json)
      return printJson({
        ...summary,
        turnList: turns,
        attachCommand: attach,
        malformed: c.malformed,
        ...(c.meta?.caps ? { caps: c.meta.caps } : {}),
        ...(c.meta?.forkedFrom ? { forkedFrom: c.meta.forkedFrom } : {}),
        ...(snapshot ? { snapshot } : {}),
        ...(c.state.agentSession ? { agentSession: agentSessionJson(c.state.agentSession) } : {}),
      });
    const lines = [
      `id         ${c.entry.id}`,
      ...(c.name !== undefined ? [`name       ${visibleLine(c.name)}`] : []),
      `agent      ${c.entry.agent} (runner ${c.entry.runner})`,
      `status     ${c.status}${summary.lastOutcome ? ` · last turn ${summary.lastOutcome}` : ""}${c.pending.length ? ` · ${c.pending.length} queued` : ""}`,
      `state      ${c.live.state} (${since(c.live.since)})${c.live.detail ? ` · ${visibleLine(c.live.detail)}` : ""}`,
      `created    ${c.entry.createdAt} (${since(c.entry.createdAt)} ago)${c.meta?.forkedFrom ? ` · forked from ${c.meta.forkedFrom}` : ""}`,
      `pane       ${summary.paneClosed ? "- (closed)" : paneWhere(c.entry.pane)}`,
      ...(c.entry.place ? [`place      ${summary.place} (its artifacts are mirrored here)`] : []),
      `artifacts  ${c.files.dir}`,
      `usage      ${c.state.usage ? `${c.state.usage.input} in / ${c.state.usage.output} out${c.state.usage.cost !== undefined ? ` · ${formatUsd(c.state.usage.cost)}` : ""}` : "-"}`,
      `activity   ${c.state.lastActivity ? `${since(c.state.lastActivity.ts)} ago · ${visibleLine(c.state.lastActivity.text)}` : "-"}`,
      `attach     ${attach ? shellQuote(attach) : "-"}`,
      ...(c.meta?.caps
        ? [
            `caps       ${Object.entries(c.meta.caps)
              .map(([k, v]) => `${k}=${v}`)
              .join(" ")}`,
          ]
        : []),
      ...(snapshot
        ? [
            `snapshot   ${snapshot.path} (kept ${since(snapshot.takenAt)} ago${snapshot.openTool ? ` · open tool: ${visibleLine(snapshot.openTool)}` : ""}; spawn --resume continues from it)`,
          ]
        : []),
      ...(c.state.agentSession ? agentSessionLines(c.state.agentSession) : []),
      ...(c.malformed.count > 0 ? [`events     ${malformedLine(c.malformed)}`] : []),
      "turns",
      ...turns.map(
        (t) =>
          `  ${t.n}. ${t.turnId}  ${t.status}${t.durationMs !== null ? ` ${humanDuration(t.durationMs)}` : ""}  ${t.promptBytes} B prompt${t.output ? ` · ${t.output.bytes} B → ${t.output.path}` : ""}${t.outputError ? ` · ${t.outputError.code}` : ""}${t.reason ? ` · ${visibleLine(t.reason)}` : ""}`,
      ),
      ...(summary.queuedTurns.length > 0
        ? ["queued", ...summary.queuedTurns.map((q) => queuedLine(q, turns.length))]
        : []),
    ];
    say(`${lines.join("\n")}\n`);
  });

  common(
    program
      .command("capture")
      .summary("text of a child's pane")
      .argument("<id>", "child id or unique prefix")
      .option("-n, --lines <n>", "how many lines of history (1-10000)", "200"),
  ).action(async (id: string, flags: CommonOptions & { lines: string }) => {
    const m = muster(flags);
    const out = await m.capture(id, parsePositiveInt(flags.lines, "--lines", 10_000));
    if (flags.json) return printJson(out);
    process.stdout.write(out.text.endsWith("\n") ? out.text : `${out.text}\n`);
  });
}
