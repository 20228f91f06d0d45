/**
 * The built-in deterministic mock agent. Speaks muster's JSONL agent protocol on stdout.
 * Usage: node agent.js <prompt-file>. Prompt lines `mock: key=value …` control it (see options.ts).
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, watch } from "node:fs";
import { basename, dirname } from "node:path";
import { parseMockOptions, taskLine } from "./options.js";

// A hung or crashed mock never outlives this, so a broken test cannot leak it forever.
const SELF_DESTRUCT_MS = 180_000;
const TOOL_NAMES = ["read_file", "grep", "bash", "list_dir", "edit_file"];

const emit = (msg: object): void => {
  process.stdout.write(`${JSON.stringify(msg)}\n`);
};
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function defaultAnswer(prompt: Buffer, text: string): string {
  const sha = createHash("sha256").update(prompt).digest("hex");
  return [
    "# mock answer",
    "",
    `Task: ${taskLine(text) || "(empty)"}`,
    `prompt-bytes: ${prompt.length}`,
    `prompt-sha256: ${sha}`,
    "",
  ].join("\n");
}

/** Resolves when `file` exists (watching its directory, so every waiting mock wakes at once). */
function gateOpens(file: string): Promise<void> {
  return new Promise((resolve) => {
    if (existsSync(file)) return resolve();
    const w = watch(dirname(file), (_e, name) => {
      if (name === basename(file) && existsSync(file)) {
        w.close();
        resolve();
      }
    });
    if (existsSync(file)) {
      w.close();
      resolve();
    }
  });
}

function sizedAnswer(n: number): string {
  const unit = "mock output line, padded to a fixed width for size tests.....\n";
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

async function main(): Promise<void> {
  setTimeout(() => process.exit(124), SELF_DESTRUCT_MS).unref();
  const file = process.argv[2];
  if (!file) {
    process.stderr.write("usage: agent.js <prompt-file>\n");
    process.exit(2);
  }
  const prompt = readFileSync(file);
  const text = prompt.toString("utf8");
  const opts = parseMockOptions(text);
  emit({ type: "session", id: `mock-${process.pid}` });
  emit({ type: "text", text: "Looking at the task...\n" });

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

  if (opts.at !== undefined) await sleep(Math.max(0, opts.at - Date.now()));
  if (opts.gate !== undefined) await gateOpens(opts.gate);
  if (opts.crash) {
    emit({ type: "progress", text: "crashing the child host (mock: crash)" });
    process.kill(process.ppid, "SIGKILL");
    await sleep(SELF_DESTRUCT_MS);
  }
  if (opts.hang) {
    emit({ type: "progress", text: "hanging until cancelled (mock: hang)" });
    await sleep(SELF_DESTRUCT_MS);
  }
  if (opts.exit !== undefined && opts.exit !== 0) {
    process.stderr.write(`mock: failing with exit code ${opts.exit} as asked\n`);
    process.exit(opts.exit);
  }
  const answer =
    opts.bytes !== undefined ? sizedAnswer(opts.bytes) : (opts.reply ?? defaultAnswer(prompt, text));
  emit({ type: "usage", input: Math.ceil(prompt.length / 4), output: Math.ceil(answer.length / 4), cost: 0 });
  emit({ type: "result", status: "completed", text: answer });
}

void main();
