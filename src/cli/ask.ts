/**
 * `muster ask "question" [--choices a,b] [--timeout 10m]`, run by an agent inside its pane: asks the
 * child's parent and blocks until it answers (`muster answer <id> "text"`), then prints the answer.
 * The question goes to the child host as a control request (it records a `question` event, so every
 * parent-side reader sees it as asked); the answer arrives as answers/<requestId>.json. Kept free of heavy
 * imports, like child-commands.ts: bin/muster.js loads only this for `ask`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { rawSetting } from "../base/settings/resolve.js";
import { dropJsonFile } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { pokeHost } from "../util/poke.js";
import { readFileBounded } from "../util/safe-read.js";
import { timerProblem } from "../util/timer-limit.js";

export const ASK_USAGE =
  'usage: muster ask <question> [--choices a,b] [--timeout 10m]\nAsk this child\'s parent and wait for its answer (printed on stdout). With --timeout: "no answer" and exit 124 when none came in time.';

// An answer is at most what a prompt may be (1 MiB of text), JSON-escaped, plus slack.
const MAX_ANSWER_FILE = 6 * 1024 * 1024 + 64 * 1024;
const POLL_MS = 250;
const MAX_CHOICES = 32;
export const NO_ANSWER_EXIT = 124;

function durationMs(s: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m) return undefined;
  const ms = Math.round(
    Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "s"]!,
  );
  return ms > 0 ? ms : undefined;
}

interface AskArgs {
  text: string;
  choices?: string[];
  timeoutMs?: number;
}

function parse(argv: string[]): AskArgs | string {
  const words: string[] = [];
  let choices: string[] | undefined;
  let timeoutMs: number | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--choices") {
      const v = argv[++i];
      choices = v
        ?.split(",")
        .map((c) => c.trim())
        .filter((c) => c !== "");
      if (!choices || choices.length === 0) return "--choices needs a comma-separated list, e.g. yes,no";
      if (choices.length > MAX_CHOICES || choices.some((c) => c.length > 200))
        return `--choices takes at most ${MAX_CHOICES} choices of at most 200 characters each`;
    } else if (a === "--timeout") {
      const v = argv[++i];
      timeoutMs = v === undefined ? undefined : durationMs(v);
      if (timeoutMs === undefined)
        return `invalid duration "${v ?? ""}" for --timeout: use e.g. 30s, 10m, 1h`;
      const tooLong = timerProblem(timeoutMs, "--timeout");
      if (tooLong) return `${tooLong}, not "${v}"`;
    } else words.push(a);
  }
  const text = words.join(" ");
  if (text.trim() === "") return ASK_USAGE;
  return { text, ...(choices ? { choices } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
}

/** Hands a request to the child host: control/<ms>-<hex>.json, written atomically, then a poke. */
function control(dir: string, req: object): void {
  dropJsonFile(path.join(dir, "control"), req);
  pokeHost(dir);
}

/** Resolves with the answer's text once answers/<id>.json exists, or undefined after `timeoutMs`. */
function answerOf(file: string, timeoutMs: number | undefined): Promise<string | undefined> {
  return new Promise((resolve) => {
    let watcher: fs.FSWatcher | undefined;
    const timers: NodeJS.Timeout[] = [];
    const done = (v: string | undefined): void => {
      watcher?.close();
      for (const t of timers) clearTimeout(t);
      resolve(v);
    };
    const look = (): void => {
      let raw: Buffer;
      try {
        raw = readFileBounded(file, MAX_ANSWER_FILE);
      } catch {
        return; // not there yet
      }
      try {
        const text = (JSON.parse(raw.toString("utf8")) as { text?: unknown }).text;
        if (typeof text === "string") done(text);
      } catch {
        // A torn file cannot be: the parent writes it whole (temp + link). Anything else is not an answer.
      }
    };
    try {
      // fs.watch is the fast path; the poll catches a notification that never came.
      watcher = fs.watch(path.dirname(file), () => look());
      watcher.on("error", () => {});
    } catch {
      watcher = undefined;
    }
    timers.push(setInterval(look, POLL_MS));
    if (timeoutMs !== undefined) timers.push(setTimeout(() => done(undefined), timeoutMs));
    look();
  });
}

/** Runs `muster ask`; returns the exit code. */
export async function runAsk(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${ASK_USAGE}\n`);
    return 0;
  }
  const dir = rawSetting(process.env, "artifactDir");
  if (!dir) {
    process.stderr.write(
      "muster: `muster ask` works only inside a child's pane (MUSTER_ARTIFACT_DIR is not set)\n",
    );
    return 2;
  }
  const args = parse(argv);
  if (typeof args === "string") {
    process.stderr.write(args.startsWith("usage") ? `${args}\n` : `muster: ${args}\n`);
    return 2;
  }
  const requestId = uuidv7();
  const answers = path.join(dir, "answers");
  try {
    fs.mkdirSync(answers, { recursive: true, mode: 0o700 });
    control(dir, {
      kind: "ask",
      requestId,
      text: args.text,
      ...(args.choices ? { choices: args.choices } : {}),
    });
  } catch (e) {
    process.stderr.write(`muster: cannot ask: ${(e as Error).message}\n`);
    return 1;
  }
  process.stderr.write(
    `muster: asked the parent (question ${requestId.slice(-8)}); waiting for the answer\n`,
  );
  const text = await answerOf(path.join(answers, `${requestId}.json`), args.timeoutMs);
  try {
    control(dir, {
      kind: "answered",
      requestId,
      outcome: text === undefined ? "timeout" : "answered",
      text: text ?? "",
    });
  } catch {
    // The answer is what matters to the agent; the record of it is best effort here.
  }
  if (text === undefined) {
    process.stderr.write(`muster: no answer to question ${requestId.slice(-8)} in time\n`);
    process.stdout.write("no answer\n");
    return NO_ANSWER_EXIT;
  }
  process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  return 0;
}
