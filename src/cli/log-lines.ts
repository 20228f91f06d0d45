import type { ChildLog } from "../core/logs-follow.js";
import type { MusterEvent } from "../core/types.js";
import { formatUsd } from "../util/cost.js";
import { shortId } from "../util/ids.js";
import { clip, humanDuration } from "./format.js";
import { visibleLine } from "./sanitize.js";

// One event is one line; an answer shows its first lines, bounded (the whole of it: muster result).
const LINE_MAX = 240;
export const PREVIEW_BYTES = 2048;
const PREVIEW_LINES = 12;

/** What a log line needs besides its event: the turn's number, by turn id (1 = the child's first turn). */
export type TurnNumber = (turnId: string) => number | undefined;

const turnTag = (turnId: string | undefined, n: TurnNumber): string => {
  if (turnId === undefined) return "";
  const k = n(turnId);
  return k !== undefined ? `turn ${k}` : `turn ${shortId(turnId)}`;
};

/** The text of one event, or undefined for an event type this version does not know (shown by type). */
function describe(e: MusterEvent): string {
  switch (e.type) {
    case "child_started":
      return `${e.by === "resume" ? "host resumed" : "host started"} (pid ${e.pid}, runner ${e.runner})`;
    case "turn_queued":
      return `queued: ${e.running} of ${e.limit} run slots busy`;
    case "turn_held":
      return `paused (${e.kind}): ${e.reason}${e.resetAt ? `, until ${e.resetAt}` : ""}; muster resume-tree continues`;
    case "rate_limited":
      return `rate limited (wait ${e.attempt}): running the turn again at ${e.resetAt}`;
    case "turn_started":
      return `started: ${e.source} prompt, ${e.promptBytes} B${e.model ? `, model ${e.model}` : ""}`;
    case "runner_started":
      return `runner started (pid ${e.pid})`;
    case "runner_exited":
      return `runner exited after the turn (${e.signal ?? `exit code ${e.exitCode}`}${e.killed ? ", killed" : ""})`;
    case "tool_activity":
      return `${e.phase === "start" ? "⚙" : "✓"} ${e.name} ${e.summary}`.trim();
    case "usage":
      return `usage ${e.usage.input} in / ${e.usage.output} out${e.usage.cost !== undefined ? ` · ${formatUsd(e.usage.cost)}` : ""}`;
    case "progress":
      return `progress: ${e.text}`;
    case "permission":
      return `permission ${e.state}: ${e.tool}${e.summary ? ` ${e.summary}` : ""}`;
    case "question":
      return `question: ${e.text}`;
    case "completion":
      return `${e.status}${e.durationMs !== undefined ? ` in ${humanDuration(e.durationMs)}` : ""}${e.reason ? ` · ${e.reason}` : ""}`;
    case "restarted":
      return `↻ restarted (${e.attempt} of ${e.max}, by ${e.by === "parent" ? "a parent: new host" : "the host: new agent"}): ${e.reason}`;
    case "child_exited":
      return `host exited (${e.reason}${e.detail ? `: ${e.detail}` : ""})`;
    case "worktree_setup":
      return [
        "worktree set up",
        e.included
          ? `${e.included.files} file${e.included.files === 1 ? "" : "s"} (${e.included.bytes} B) copied in`
          : "",
        e.script
          ? `${e.script} exited ${e.exitCode ?? "?"}${e.durationMs !== undefined ? ` in ${humanDuration(e.durationMs)}` : ""}`
          : "",
      ]
        .filter(Boolean)
        .join(" · ");
    default:
      return (e as { type: string }).type;
  }
}

/** `HH:MM:SS.mmm  turn N  text`: one line, its child-supplied text made visible (never obeyed), bounded. */
export function logLine(e: MusterEvent, n: TurnNumber): string {
  const time = typeof e.ts === "string" ? e.ts.slice(11, 23) : "            ";
  const tag = turnTag("turnId" in e ? e.turnId : undefined, n);
  return `${time}  ${tag.padEnd(7)}  ${clip(visibleLine(describe(e)), LINE_MAX)}`;
}

/** The last lines of what a worktree's set-up printed, each made visible. */
export function setupPreview(e: MusterEvent): string[] {
  if (e.type !== "worktree_setup" || !e.outputTail) return [];
  const lines = e.outputTail.replace(/\n$/, "").split("\n");
  const shown = lines.slice(-PREVIEW_LINES).map((l) => `  │ ${clip(visibleLine(l), LINE_MAX)}`);
  if (lines.length > PREVIEW_LINES)
    shown.unshift(`  │ … its last ${PREVIEW_LINES} lines (the rest: muster logs --json)`);
  return shown;
}

/**
 * The first lines of a completion's answer (its snapshot), each made visible, with a note of what is left
 * out. Reads at most PREVIEW_BYTES (the log's answerHead); an unreadable snapshot is one note line.
 */
export function answerPreview(log: Pick<ChildLog, "answerHead">, e: MusterEvent): string[] {
  if (e.type !== "completion" || !e.output) return [];
  let head: Buffer;
  try {
    head = log.answerHead(e.output, PREVIEW_BYTES);
  } catch (err) {
    return [`  │ (answer unreadable: ${clip(visibleLine((err as Error).message), 120)})`];
  }
  const text = head.toString("utf8").replace(/\uFFFD+$/, "");
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const shown = lines.slice(0, PREVIEW_LINES).map((l) => `  │ ${clip(visibleLine(l), LINE_MAX)}`);
  const more = e.output.bytes > head.length || lines.length > PREVIEW_LINES;
  if (more) shown.push(`  │ … ${e.output.bytes} B in all: muster result (or ${e.output.path})`);
  return shown;
}
