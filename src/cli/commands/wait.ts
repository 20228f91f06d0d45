import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { DEFAULT_WAIT_MODE } from "../../core/defaults.js";
import type { Muster } from "../../core/muster.js";
import type { PendingRequest } from "../../core/requests.js";
import type { TurnResult } from "../../core/results.js";
import type { MusterEvent } from "../../core/types.js";
import type { WaitOptions, WaitOutcome } from "../../core/wait.js";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { EXIT, STATUS_EXIT } from "../exit-codes.js";
import { clip, humanDuration, parseTimeout } from "../format.js";
import { takeInterrupt } from "../interrupt.js";
import { isolationNote } from "../isolation-note.js";
import { ExitWith, printAnswerBlock, printJson, say, warn } from "../output.js";
import { treePausedLine } from "../pause-line.js";
import { visible, visibleLine } from "../sanitize.js";

/** Waits, showing one live status line on a terminal's stderr; Ctrl-C ends the wait (exit 130), not the children. */
export async function waitWithProgress(
  m: Muster,
  target: string[] | { group: string; bestOf?: boolean },
  opts: WaitOptions,
  json: boolean,
): Promise<WaitOutcome> {
  let ids = Array.isArray(target) ? target : [];
  const controller = new AbortController();
  const release = takeInterrupt(() => controller.abort());
  const live = !json && process.stderr.isTTY;
  const started = Date.now();
  const last = new Map<string, string>();
  let timer: NodeJS.Timeout | undefined;
  const draw = (): void => {
    const acts = [...last.values()].slice(-1)[0] ?? "starting";
    process.stderr.write(
      `\r\x1b[2Kwaiting for ${ids.length} child${ids.length > 1 ? "ren" : ""} · ${humanDuration(Date.now() - started)} · ${clip(visibleLine(acts), 70)}`,
    );
  };
  if (live) timer = setInterval(draw, 1000);
  try {
    const waitOpts: WaitOptions = {
      ...opts,
      withText: true,
      signal: controller.signal,
      onEvent: (id, e) => {
        const activity = activityOf(e);
        if (activity === undefined) return;
        last.set(id, activity);
        if (live) draw();
      },
    };
    if (Array.isArray(target)) return await m.wait(ids, waitOpts);
    const { mode: _all, ...groupOpts } = waitOpts;
    const onMembers = (members: string[]): void => {
      ids = members;
    };
    // A best-of run's candidates come back in the run's order.
    if (target.bestOf) {
      const { turns: _own, ...bestOpts } = groupOpts;
      return await m.waitBestOf(target.group, { ...bestOpts, onMembers });
    }
    return await m.waitGroup(target.group, { ...groupOpts, onMembers });
  } finally {
    release();
    if (timer) clearInterval(timer);
    if (live) process.stderr.write("\r\x1b[2K");
  }
}

/** What an event says the child is doing now, for the progress line (undefined: it changes nothing). */
function activityOf(e: MusterEvent): string | undefined {
  if (e.type === "tool_activity") return `${e.name} ${e.summary}`;
  if (e.type === "progress") return e.text;
  if (e.type === "turn_started") return "turn started";
  if (e.type === "permission" && e.requestId) {
    const what = `${e.tool}${e.summary ? ` ${e.summary}` : ""}`;
    // The command first: the line is clipped, and it is what the reader needs.
    return e.state === "pending"
      ? `waiting for permission (muster allow|deny ${shortId(e.requestId)}): ${what}`
      : `permission ${e.state}: ${e.tool}`;
  }
  if (e.type === "question")
    return `waiting for an answer (muster answer ${shortId(e.requestId)}): ${e.text}`;
  if (e.type === "answered") return "answered";
  return undefined;
}

/** Multi-line child text, indented under the line that introduces it. */
const indented = (text: string): string =>
  `${visible(text.trimEnd())
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n")}\n`;

/** How the acceptance check judged the answer: a failure with its output's end, a pass after corrections. */
function verifyNote(r: TurnResult): string {
  const v = r.verified;
  if (!v) return "";
  const runs =
    v.attempts > 1 ? ` (${v.attempts} runs, ${v.attempts - 1} correction${v.attempts > 2 ? "s" : ""})` : "";
  if (r.status === "completed")
    return v.attempts > 1 ? `muster: verified: ${visibleLine(v.command)} passed${runs}\n` : "";
  if (r.status !== "failed_verification") return "";
  return `muster: verify failed${runs}; the end of its output:\n${indented(v.outputTail)}`;
}

/** One line per request a still-running child waits on, with the command that answers it. */
const waitingLine = (r: PendingRequest): string =>
  r.type === "permission"
    ? `muster: ${shortId(r.child)} waits for permission ${shortId(r.id)} (${visibleLine(`${r.tool ?? ""}${r.summary ? ` ${r.summary}` : ""}`)}): muster allow ${shortId(r.id)} or muster deny ${shortId(r.id)}\n`
    : `muster: ${shortId(r.child)} waits for an answer to ${shortId(r.id)} (${visibleLine(r.text)}): muster answer ${shortId(r.id)} "…"\n`;

const header = (r: TurnResult): string =>
  `── ${shortId(r.id)} · ${r.name !== undefined ? visibleLine(r.name) : r.agent} · ${r.status}${r.durationMs !== undefined ? ` · ${humanDuration(r.durationMs)}` : ""}${r.reason ? ` · ${visibleLine(r.reason)}` : ""}`;

/** Prints settled results (text for one, headed sections for several) and throws ExitWith for a non-zero outcome. */
export function printResults(
  outcome: WaitOutcome,
  json: boolean,
  extra: Record<string, unknown> = {},
  exitOf: (o: WaitOutcome) => number = exitCodeOf,
): void {
  if (json)
    printJson({
      ...extra,
      results: outcome.results,
      pending: outcome.pending,
      timedOut: outcome.timedOut,
      interrupted: outcome.interrupted,
      ...(outcome.receiptError ? { receiptError: outcome.receiptError } : {}),
      ...(outcome.requests ? { requests: outcome.requests } : {}),
      ...(outcome.treePaused ? { treePaused: outcome.treePaused } : {}),
    });
  else {
    const single = outcome.results.length + outcome.pending.length === 1;
    for (const r of outcome.results) {
      if (!single) say(`${header(r)}\n`);
      // A completed turn's reason is a note worth reading (the agent stopped at a refused tool).
      else if (r.status !== "completed" || r.reason)
        warn(`muster: ${shortId(r.id)} ${r.status}${r.reason ? `: ${visibleLine(r.reason)}` : ""}\n`);
      if (r.stderr) warn(`muster: the agent's stderr:\n${indented(r.stderr)}`);
      warn(verifyNote(r));
      if (r.text !== undefined) printAnswerBlock(r.text, !single);
      else if (r.outputError) warn(`muster: ${visibleLine(r.outputError.message)}\n`);
      warn(isolationNote(r));
    }
    if (outcome.treePaused) warn(`muster: ${treePausedLine(outcome.treePaused)}\n`);
    if (outcome.receiptError) warn(`muster: warning: ${outcome.receiptError}\n`);
    if (outcome.pending.length > 0) {
      const why = outcome.timedOut ? "timed out" : outcome.interrupted ? "interrupted" : "still running";
      warn(`muster: ${why}; still running: ${outcome.pending.map((p) => shortId(p)).join(" ")}\n`);
      for (const r of outcome.requests ?? []) warn(waitingLine(r));
    }
  }
  const code = exitOf(outcome);
  if (code !== 0) throw new ExitWith(code);
}

/** interrupted → 130, timed out with nothing settled for --all → 124, else the first non-completed outcome's code. */
export function exitCodeOf(o: WaitOutcome): number {
  if (o.interrupted) return EXIT.interrupted;
  if (o.timedOut) return EXIT.timeout;
  for (const r of o.results) if (r.status !== "completed") return STATUS_EXIT[r.status];
  return EXIT.ok;
}

interface WaitFlags extends CommonOptions {
  first?: boolean;
  all?: boolean;
  timeout?: string;
  group?: string;
}

export function registerWait(program: Command): void {
  common(
    program
      .command("wait")
      .summary("wait for children's current turns to settle")
      .description(
        "Wait for the current turn of each child (the newest one sent) and print the results; --group seals that group and waits for all its members.",
      )
      .argument("[ids...]", "child ids or unique prefixes")
      .option("--first", "return when the first one settles (the rest are reported as pending)")
      .option("--all", "return when all have settled (default)")
      .option("--group <id>", "seal this group and wait for every member")
      .option("--timeout <duration>", "give up after this long, exit 124 (the children keep running)"),
  ).action(async (ids: string[], flags: WaitFlags) => {
    if (flags.first && flags.all)
      throw new MusterError("invalid_argument", "choose --first or --all, not both");
    if ((flags.group === undefined) === (ids.length === 0)) {
      throw new MusterError("invalid_argument", "name the children to wait for, or --group <id> (not both)");
    }
    const m = muster(flags);
    const timeout = flags.timeout ? { timeoutMs: parseTimeout(flags.timeout) } : {};
    if (flags.group !== undefined && flags.first)
      throw new MusterError(
        "invalid_argument",
        "a group is delivered whole: --first does not go with --group",
      );
    const outcome = await waitWithProgress(
      m,
      flags.group !== undefined ? { group: flags.group } : ids,
      { mode: flags.first ? "first" : DEFAULT_WAIT_MODE, ...timeout },
      !!flags.json,
    );
    printResults(outcome, !!flags.json, flags.group !== undefined ? { group: flags.group } : {});
  });
}
