import type { Command } from "commander";
import type { ChildLog } from "../../core/logs-follow.js";
import { applyEvents, emptyState } from "../../core/state.js";
import type { MalformedLine, MusterEvent } from "../../core/types.js";
import { muster } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { takeInterrupt } from "../interrupt.js";
import { answerPreview, logLine, setupPreview } from "../log-lines.js";
import { ExitWith, warn } from "../output.js";
import { writeStdout } from "../stdout.js";

interface LogsFlags {
  follow?: boolean;
  json?: boolean;
  primary?: string;
}

/** One event on stdout: as stored (NDJSON, C1 controls escaped) with --json, else one readable line. */
function printer(json: boolean, log: ChildLog) {
  const state = emptyState();
  const turnNumber = (turnId: string) => state.turns.find((t) => t.turnId === turnId)?.n;
  return (e: MusterEvent): void => {
    applyEvents(state, [e]);
    if (json) {
      const text = JSON.stringify(e).replace(
        /[\u0080-\u009f]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
      writeStdout(`${text}\n`);
      return;
    }
    // Lines are made visible (control characters shown, never obeyed) as they are built.
    writeStdout(`${[logLine(e, turnNumber), ...setupPreview(e), ...answerPreview(log, e)].join("\n")}\n`);
  };
}

/** Follows the child's events until its host exits (0) or Ctrl-C (130, the child keeps running). */
async function follow(log: ChildLog, print: (e: MusterEvent) => void): Promise<number> {
  const f = log.follow(print, malformed);
  const release = takeInterrupt(() => f.stop());
  try {
    return (await f.done) === "exited" ? EXIT.ok : EXIT.interrupted;
  } finally {
    release();
  }
}

const malformed = (bad: MalformedLine): void =>
  warn(`muster: events.ndjson @${bad.offset}: ${bad.reason} (skipped)\n`);

export function registerLogs(program: Command): void {
  program
    .command("logs")
    .summary("a child's events as lines; -f follows them live")
    .description(
      "Print a child's events as lines: turns, tool start and end, usage, progress, permissions, outcomes with the first lines of each answer. With -f, keep printing new events as they come until the child's host exits (exit 0) or Ctrl-C (exit 130).",
    )
    .argument("<id>", "child id, unique prefix or suffix, or its name")
    .option("-f, --follow", "keep printing new events until the child's host exits or Ctrl-C")
    .option("--json", "the events as stored, one JSON record per line (NDJSON)")
    .option(
      "--primary <id>",
      "act for this primary: its id, the short id ls --all shows, or a unique prefix (default: MUSTER_PRIMARY, else this repository's or directory's)",
    )
    .action(async (id: string, flags: LogsFlags) => {
      const log = muster(flags).logs(id);
      const print = printer(!!flags.json, log);
      if (!flags.follow) {
        for (const e of log.events(malformed)) print(e);
        return;
      }
      const code = await follow(log, print);
      if (code !== EXIT.ok) throw new ExitWith(code);
    });
}
