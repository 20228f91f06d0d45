/**
 * The built-in deterministic mock agent. Speaks muster's JSONL agent protocol on stdout.
 * Usage: node agent.js [--model m] [--reasoning r] [--session id] <prompt-file>.
 * Prompt lines `mock: key=value …` control it (see options.ts). Like a real agent CLI it keeps its own
 * sessions (under $MUSTER_ARTIFACT_DIR/runner/), so `--session <id>` continues an earlier conversation.
 */
import { createHash, randomUUID } from "node:crypto";
import { existsSync, type FSWatcher, mkdirSync, readFileSync, watch, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { rawSetting } from "../../base/settings/resolve.js";
import { demandedSchema, structuredAnswer } from "./example.js";
import { parseMockOptions, taskLine } from "./options.js";

// A hung or crashed mock never outlives this, so a broken test cannot leak it forever.
const SELF_DESTRUCT_MS = 180_000;
const TOOL_NAMES = ["read_file", "grep", "bash", "list_dir", "edit_file"];

/** Waits (bounded) until the host's log records this process as its turn's runner. */
async function runnerRecorded(): Promise<void> {
  const dir = rawSetting(process.env, "artifactDir");
  if (!dir) return;
  const mine = new RegExp(`"type":"runner_started"[^\\n]*"pid":${process.pid}\\b`);
  for (const end = Date.now() + 10_000; Date.now() < end; await sleep(10)) {
    try {
      if (mine.test(readFileSync(join(dir, "events.ndjson"), "utf8"))) return;
    } catch {
      // Not there yet, or being replaced.
    }
  }
}

const emit = (msg: object): void => {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Args {
  promptFile: string;
  model?: string;
  reasoning?: string;
  session?: string;
}

function parseArgs(argv: string[]): Args | undefined {
  const out: Partial<Args> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--model" || a === "--reasoning" || a === "--session") out[a.slice(2) as "model"] = argv[++i];
    else out.promptFile = a;
  }
  return out.promptFile ? (out as Args) : undefined;
}

/** The mock's own session store: the prompts of earlier turns, by session id. */
function sessionFile(id: string): string {
  const dir = join(rawSetting(process.env, "artifactDir") ?? tmpdir(), "runner");
  mkdirSync(dir, { recursive: true });
  return join(dir, `mock-session-${id.replace(/[^A-Za-z0-9-]/g, "_")}.json`);
}

function loadHistory(id: string): string[] {
  try {
    return JSON.parse(readFileSync(sessionFile(id), "utf8")) as string[];
  } catch {
    return [];
  }
}

function defaultAnswer(prompt: Buffer, text: string, args: Args, session: string, history: string[]): string {
  const sha = createHash("sha256").update(prompt).digest("hex");
  return [
    "# mock answer",
    "",
    `Task: ${taskLine(text) || "(empty)"}`,
    `prompt-bytes: ${prompt.length}`,
    `prompt-sha256: ${sha}`,
    `model: ${args.model ?? "(default)"}`,
    `reasoning: ${args.reasoning ?? "(default)"}`,
    `session: ${session}`,
    `history-turns: ${history.length}`,
    ...(history.length > 0 ? [`previous-task: ${taskLine(history[history.length - 1]!)}`] : []),
    "",
  ].join("\n");
}

/** Resolves when `file` exists: watching its directory wakes every waiting mock at once; a slow poll
 * covers a missed notification or a watch that could not be made (no inotify instance left). */
function gateOpens(file: string): Promise<void> {
  return new Promise((resolve) => {
    let watcher: FSWatcher | undefined;
    const look = (): void => {
      if (!existsSync(file)) return;
      clearInterval(poll);
      watcher?.close();
      resolve();
    };
    const poll = setInterval(look, 500);
    try {
      watcher = watch(dirname(file), look);
      watcher.on("error", () => {});
    } catch {
      watcher = undefined;
    }
    look();
  });
}

function sizedAnswer(n: number): string {
  const unit = "mock output line, padded to a fixed width for size tests.....\n";
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

async function main(): Promise<void> {
  setTimeout(() => process.exit(124), SELF_DESTRUCT_MS).unref();
  const args = parseArgs(process.argv.slice(2));
  if (!args) {
    process.stderr.write("usage: agent.js [--model m] [--reasoning r] [--session id] <prompt-file>\n");
    process.exit(2);
  }
  const prompt = readFileSync(args.promptFile);
  const text = prompt.toString("utf8");
  const opts = parseMockOptions(text);
  const session = args.session ?? randomUUID();
  const history = loadHistory(session);
  emit({ type: "session", id: session });
  emit({ type: "text", text: "Looking at the task...\n" });
  if (opts.ask) emit({ type: "permission", state: "pending", tool: opts.ask, summary: "mock: ask" });

  // Tool activities are spread over the sleep so a watcher sees live progress.
  const steps = Math.max(opts.tools, 1);
  const slice = (opts.sleep * 1000) / steps;
  for (let i = 0; i < steps; i++) {
    if (i < opts.tools) {
      const name = TOOL_NAMES[i % TOOL_NAMES.length]!;
      emit({ type: "tool", phase: "start", name, summary: `step ${i + 1} of ${opts.tools}` });
      await sleep(slice / 2);
      emit({ type: "tool", phase: "end", name, summary: `step ${i + 1} done` });
      await sleep(slice / 2);
    } else {
      await sleep(slice);
    }
  }

  if (opts.ask) emit({ type: "permission", state: "granted", tool: opts.ask });
  if (opts.at !== undefined) await sleep(Math.max(0, opts.at - Date.now()));
  if (opts.gate !== undefined) await gateOpens(opts.gate);
  if (opts.crash) {
    emit({ type: "progress", text: "crashing the child host (mock: crash)" });
    // Mid-turn, as a host dies in use: once it has recorded this runner (a host killed before that is a case of
    // its own, which test/e2e/faults.test.ts makes).
    await runnerRecorded();
    process.kill(process.ppid, "SIGKILL");
    await sleep(SELF_DESTRUCT_MS);
  }
  if (opts.hang) {
    emit({ type: "progress", text: "hanging until cancelled (mock: hang)" });
    await sleep(SELF_DESTRUCT_MS);
  }
  // A provider's refusal, as an agent CLI reports it (`mock: provider=quota`, `provider-until=<epoch ms>`).
  const refused =
    (opts.providerUntil === undefined || Date.now() < opts.providerUntil) &&
    (opts.providerUnless === undefined || !existsSync(opts.providerUnless));
  if (opts.provider && refused) {
    const resetAt = opts.providerUntil !== undefined ? new Date(opts.providerUntil).toISOString() : undefined;
    const message = `mock provider error: ${opts.provider}`;
    emit({
      type: "result",
      status: "errored",
      reason: message,
      providerError: { kind: opts.provider, ...(resetAt ? { resetAt } : {}), message },
    });
    return;
  }
  if (opts.exit !== undefined && opts.exit !== 0) {
    process.stderr.write(`mock: failing with exit code ${opts.exit} as asked\n`);
    process.exit(opts.exit);
  }
  // A later turn can follow a script set by the session's first prompt (`reply2=`), as a corrected answer.
  const first = history.length > 0 ? parseMockOptions(history[0]!) : undefined;
  const scripted = first?.laterReply;
  // A demand for a JSON value gets one that fits, unless the session follows a script (tests of refusals).
  const schema = first?.reply === undefined ? demandedSchema(text) : undefined;
  const answer =
    opts.bytes !== undefined
      ? sizedAnswer(opts.bytes)
      : (opts.reply ??
        scripted ??
        (schema ? structuredAnswer(schema) : defaultAnswer(prompt, text, args, session, history)));
  if (opts.deny) emit({ type: "permission", state: "denied", tool: opts.deny });
  writeFileSync(sessionFile(session), JSON.stringify([...history, text]));
  emit({ type: "usage", input: Math.ceil(prompt.length / 4), output: Math.ceil(answer.length / 4), cost: 0 });
  const final = opts.stamp ? `final-record-at ${performance.timeOrigin + performance.now()}\n` : answer;
  emit({ type: "result", status: "completed", text: final });
  if (opts.linger !== undefined) await sleep(opts.linger);
}

void main();
