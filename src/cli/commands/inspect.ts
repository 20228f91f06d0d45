import type { Command } from "commander";
import { paneWhere } from "../../core/panes.js";
import type { QueuedTurn } from "../../core/state.js";
import type { Verified } from "../../core/types.js";
import type { ChildView } from "../../core/views.js";
import { formatUsd } from "../../util/cost.js";
import { agentSessionJson, agentSessionLines } from "../agent-session.js";
import { type CommonOptions, common, muster } from "../context.js";
import { clip, humanDuration, parsePositiveInt, shellQuote, since } from "../format.js";
import { lsTable } from "../ls-table.js";
import { watchList } from "../ls-watch.js";
import { printJson, say, withSelf } from "../output.js";
import { treePausedLine } from "../pause-line.js";
import { visible, visibleLine } from "../sanitize.js";
import { writeStdout } from "../stdout.js";

/** "N malformed line(s) at offset …" for events.ndjson (the spans are skipped by every reader). */
function malformedLine(m: ChildView["malformed"]): string {
  const spans = m.spans.map((s) => `${s.offset} (${s.length} B: ${clip(s.reason, 60)})`).join(", ");
  const more = m.count > m.spans.length ? `, and ${m.count - m.spans.length} more` : "";
  return `${m.count} malformed line${m.count === 1 ? "" : "s"} at offset ${spans}${more}`;
}

/** The JSON shape of an unreadable child in ls (its files were refused: nothing else is known). */
const unreadableSummary = (v: ChildView) => ({ id: v.id, status: v.status, error: v.unreadable });

/** The JSON shape of a child in ls/status. */
export function childSummary(v: ChildView) {
  return {
    id: v.id,
    ...(v.name !== undefined ? { name: v.name } : {}),
    agent: v.agent,
    runner: v.runner,
    status: v.status,
    live: v.live,
    lastOutcome: v.lastOutcome?.status ?? null,
    createdAt: v.createdAt,
    parent: v.parent,
    cwd: v.cwd,
    turns: v.turns.length,
    queuedTurns: v.queuedTurns,
    lastActivity: v.lastActivity,
    usage: v.usage,
    backend: v.backend,
    place: v.place,
    // A closed child has no pane to watch or attach to (the view holds none): its ref would point at nothing.
    pane: v.pane,
    paneClosed: v.status === "closed",
    artifactDir: v.artifactDir,
    resumable: v.resumable,
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
    const groups = flags.all ? await m.viewsAll() : [{ primary: m.primary, children: await m.views() }];
    const paused = flags.all ? undefined : m.treePause();
    if (flags.json) {
      const shaped = groups.map((g) => ({
        primary: g.primary,
        children: g.children.map((v) =>
          v.unreadable !== undefined ? unreadableSummary(v) : childSummary(v),
        ),
      }));
      return printJson(
        flags.all ? { primaries: shaped } : { ...shaped[0], ...(paused ? { treePaused: paused } : {}) },
      );
    }
    if (paused) say(`${treePausedLine(paused)}\n`);
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
    const v = await m.detail(id);
    const summary = childSummary(v);
    const turns = v.turns.map((t) => ({
      turnId: t.turnId,
      n: t.n,
      source: t.source,
      startedAt: t.startedAt,
      promptBytes: t.promptBytes,
      status: t.status,
      durationMs: t.durationMs ?? null,
      output: t.output ?? null,
      outputError: t.outputError ?? null,
      reason: t.reason ?? null,
      restarts: t.restarts ?? [],
      ...(t.verified ? { verified: t.verified } : {}),
    }));
    const attach = v.attachCommand;
    const snapshot = v.snapshot;
    const paused = m.treePause();
    if (flags.json)
      return printJson({
        ...summary,
        ...(paused ? { treePaused: paused } : {}),
        turnList: turns,
        attachCommand: attach,
        malformed: v.malformed,
        ...(v.caps ? { caps: v.caps } : {}),
        ...(v.restart ? { restart: v.restart } : {}),
        ...(v.forkedFrom ? { forkedFrom: v.forkedFrom } : {}),
        ...(snapshot ? { snapshot } : {}),
        ...(v.agentSession ? { agentSession: agentSessionJson(v.agentSession) } : {}),
      });
    const queued = v.queuedTurns.length;
    const lines = [
      `id         ${v.id}`,
      ...(v.name !== undefined ? [`name       ${visibleLine(v.name)}`] : []),
      `agent      ${v.agent} (runner ${v.runner})`,
      `status     ${v.status}${summary.lastOutcome ? ` · last turn ${summary.lastOutcome}` : ""}${queued ? ` · ${queued} queued` : ""}`,
      `state      ${v.live.state} (${since(v.live.since)})${v.live.detail ? ` · ${visibleLine(v.live.detail)}` : ""}`,
      ...(paused ? [`tree       ${treePausedLine(paused)}`] : []),
      `created    ${v.createdAt} (${since(v.createdAt)} ago)${v.forkedFrom ? ` · forked from ${v.forkedFrom}` : ""}`,
      `pane       ${summary.paneClosed ? "- (closed)" : paneWhere(v.pane)}`,
      ...(v.placed ? [`place      ${v.place} (its artifacts are mirrored here)`] : []),
      `artifacts  ${v.artifactDir}`,
      `usage      ${v.usage ? `${v.usage.input} in / ${v.usage.output} out${v.usage.cost !== undefined ? ` · ${formatUsd(v.usage.cost)}` : ""}` : "-"}`,
      `activity   ${v.lastActivity ? `${since(v.lastActivity.ts)} ago · ${visibleLine(v.lastActivity.text)}` : "-"}`,
      `attach     ${attach ? shellQuote(attach) : "-"}`,
      ...(v.caps
        ? [
            `caps       ${Object.entries(v.caps)
              .map(([k, n]) => `${k}=${n}`)
              .join(" ")}`,
          ]
        : []),
      ...(v.restart ? [`restart    on-lost:${v.restart.onLost}`] : []),
      ...(snapshot
        ? [
            `snapshot   ${snapshot.path} (kept ${since(snapshot.takenAt)} ago${snapshot.openTool ? ` · open tool: ${visibleLine(snapshot.openTool)}` : ""}; spawn --resume continues from it)`,
          ]
        : []),
      ...(v.agentSession ? agentSessionLines(v.agentSession) : []),
      ...(v.malformed.count > 0 ? [`events     ${malformedLine(v.malformed)}`] : []),
      "turns",
      ...turns.flatMap((t) => [
        `  ${t.n}. ${t.turnId}  ${t.status}${t.durationMs !== null ? ` ${humanDuration(t.durationMs)}` : ""}  ${t.promptBytes} B prompt${t.output ? ` · ${t.output.bytes} B → ${t.output.path}` : ""}${t.outputError ? ` · ${t.outputError.code}` : ""}${t.reason ? ` · ${visibleLine(t.reason)}` : ""}`,
        // Each restart under the turn it replayed: which attempt, when, and why its host or agent died.
        ...t.restarts.map(
          (r) => `     ↻ restart ${r.attempt} of ${r.max} (${since(r.at)} ago): ${visibleLine(r.reason)}`,
        ),
        ...(t.verified ? verifiedLines(t.verified) : []),
      ]),
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
    writeStdout(out.text.endsWith("\n") ? out.text : `${out.text}\n`);
  });
}

/** A turn's acceptance check under its line: how its last run ended and, for a failure, its output's end. */
function verifiedLines(v: Verified): string[] {
  const how = v.timedOut ? "timed out" : v.exitCode === 0 ? "passed" : `exit ${v.exitCode ?? v.signal}`;
  const runs = v.attempts > 1 ? ` after ${v.attempts} runs` : "";
  const head = `     verify ${visibleLine(v.command)}: ${how}${runs} (${humanDuration(v.durationMs)})`;
  if (v.exitCode === 0) return [head];
  const tail = visible(v.outputTail.trimEnd()).split("\n").slice(-8);
  return [head, ...tail.map((l) => `       │ ${l}`)];
}
