import type { Command } from "commander";
import { NdjsonReader } from "../../artifacts/reader.js";
import { EventTail } from "../../artifacts/tail.js";
import type { Muster } from "../../core/muster.js";
import { applyEvents, emptyState } from "../../core/state.js";
import type { MusterEvent } from "../../core/types.js";
import { muster } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { takeInterrupt } from "../interrupt.js";
import { answerPreview, logLine } from "../log-lines.js";
import { ExitWith, warn } from "../output.js";

interface LogsFlags {
  follow?: boolean;
  json?: boolean;
  primary?: string;
}

// fs.watch is the fast path; this poll covers notifications that never come (as the watcher's).
const SAFETY_POLL_MS = 1000;
// While following, a host that died without a word is looked for this often (as the watcher does).
const LIVENESS_MS = 2000;

/** One event on stdout: as stored (NDJSON, C1 controls escaped) with --json, else one readable line. */
function printer(json: boolean, artifactDir: string) {
  const state = emptyState();
  const turnNumber = (turnId: string) => state.turns.find((t) => t.turnId === turnId)?.n;
  return (e: MusterEvent): void => {
    applyEvents(state, [e]);
    if (json) {
      const text = JSON.stringify(e).replace(
        /[\u0080-\u009f]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
      process.stdout.write(`${text}\n`);
      return;
    }
    // Lines are made visible (control characters shown, never obeyed) as they are built.
    process.stdout.write(`${[logLine(e, turnNumber), ...answerPreview(artifactDir, e)].join("\n")}\n`);
  };
}

/** Follows the child's events until its host exits (0) or Ctrl-C (130); a dead host is settled lost first. */
function follow(m: Muster, id: string, print: (e: MusterEvent) => void): Promise<number> {
  const c = m.child(id);
  const state = emptyState();
  return new Promise<number>((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (code: number): void => {
      if (done) return;
      done = true;
      tail.close();
      if (timer) clearTimeout(timer);
      release();
      resolve(code);
    };
    const tail = new EventTail(
      c.files.events,
      (events) => {
        for (const e of events) print(e);
        applyEvents(state, events);
        if (state.exited) finish(EXIT.ok);
      },
      {
        pollMs: SAFETY_POLL_MS,
        onMalformed: (bad) => warn(`muster: events.ndjson @${bad.offset}: ${bad.reason} (skipped)\n`),
      },
    );
    const release = takeInterrupt(() => finish(EXIT.interrupted));
    const probe = (): void => {
      timer = setTimeout(() => {
        // reconcile writes `lost` for a host proven dead; the tail then shows it and the follow ends.
        void m
          .reconcile(m.reload(c.entry))
          .catch(() => undefined)
          .finally(() => {
            tail.pump();
            if (!done) probe();
          });
      }, LIVENESS_MS);
    };
    tail.pump();
    if (!done) probe();
  });
}

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
      const m = muster(flags);
      const c = m.child(id);
      const print = printer(!!flags.json, c.files.dir);
      if (!flags.follow) {
        const reader = new NdjsonReader<MusterEvent>(c.files.events, (bad) =>
          warn(`muster: events.ndjson @${bad.offset}: ${bad.reason} (skipped)\n`),
        );
        // Safe reads: no symlink or FIFO is followed, chunks are bounded, a record is at most 1 MiB.
        for (const e of reader.readNew()) print(e);
        return;
      }
      const code = await follow(m, c.entry.id, print);
      if (code !== EXIT.ok) throw new ExitWith(code);
    });
}
