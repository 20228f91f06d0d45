import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster, readPrompt } from "../context.js";
import { parseDuration } from "../format.js";
import { printJson } from "../output.js";
import { printResults, waitWithProgress } from "./wait.js";

interface SpawnFlags extends CommonOptions {
  agent: string;
  wait?: boolean;
  timeout?: string;
  cwd?: string;
  model?: string;
  split?: boolean;
  file?: string;
}

export function registerSpawn(program: Command): void {
  common(
    program
      .command("spawn")
      .summary("start a child agent in its own pane")
      .description(
        "Start a child agent in a new tmux pane with a first task; prints its id and returns at once (or waits with --wait).",
      )
      .argument("[prompt]", "the task (or use --file)")
      .argument(
        "[argv...]",
        "for the command runner: the argv after --, with {prompt} / {prompt_file} placeholders",
      )
      .option(
        "-a, --agent <name>",
        "agent profile (muster doctor lists runners; agents/ holds profiles)",
        process.env.MUSTER_AGENT ?? "mock",
      )
      .option("-f, --file <path>", "read the prompt from a file (- for stdin)")
      .option("-w, --wait", "wait for the first turn and print its result")
      .option("--timeout <duration>", "with --wait: give up after this long (e.g. 30s, 5m)")
      .option("--cwd <dir>", "working directory of the child (default: here)")
      .option("--model <model>", "model for the runner")
      .option("--split", "inside tmux: open as a visible split instead of a background window"),
  ).action(async (prompt: string | undefined, argv: string[], flags: SpawnFlags) => {
    const m = muster(flags);
    const spawned = await m.spawn({
      agent: flags.agent,
      prompt: readPrompt(prompt, flags.file),
      ...(argv.length > 0 ? { command: argv } : {}),
      ...(flags.cwd ? { cwd: flags.cwd } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.split ? { placement: "split" as const } : {}),
    });
    if (!flags.wait) {
      if (flags.json) printJson(spawned);
      else {
        process.stdout.write(`${spawned.id}\n`);
        if (process.stderr.isTTY)
          process.stderr.write(
            `muster: started ${spawned.agent} in pane ${spawned.paneId}; muster wait ${shortId(spawned.id)} · muster attach ${shortId(spawned.id)}\n`,
          );
      }
      return;
    }
    const outcome = await waitWithProgress(
      m,
      [spawned.id],
      { mode: "all", ...(flags.timeout ? { timeoutMs: parseDuration(flags.timeout) } : {}) },
      !!flags.json,
    );
    printResults(outcome, !!flags.json, { spawned });
  });
}
