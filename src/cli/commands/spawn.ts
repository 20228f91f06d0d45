import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { TUI_RUNNERS } from "../../core/catalog.js";
import { NAME_RULE } from "../../core/names.js";
import { DEFAULT_RESTARTS, MAX_RESTARTS, parseRestart, RESTART_RULE } from "../../core/restart.js";
import type { StartConflict } from "../../core/start.js";
import type { TreePauseView } from "../../core/tree-pause.js";
import { shortId } from "../../util/ids.js";
import { type CapFlags, capOptions, capsFrom } from "../caps-flags.js";
import { type ContainerFlags, containerFrom, containerOptions } from "../container-flags.js";
import { type CommonOptions, common, muster, readPrompt } from "../context.js";
import { parseTimeout } from "../format.js";
import { printJson, say, warn, withSelf } from "../output.js";
import { treePausedLine } from "../pause-line.js";
import { promptAndCommand } from "../prompt.js";
import { type VerifyFlags, verifyFrom, verifyOptions } from "../verify-flags.js";
import { type BestOfFlags, bestOfFrom, runBestOf } from "./best-of.js";
import { printResults, waitWithProgress } from "./wait.js";

interface SpawnFlags extends CommonOptions, CapFlags, ContainerFlags, VerifyFlags, BestOfFlags {
  agent?: string;
  resume?: string;
  reasoning?: string;
  group?: string;
  seal?: boolean;
  wait?: boolean;
  timeout?: string;
  cwd?: string;
  model?: string;
  split?: boolean;
  file?: string;
  backend?: string;
  place?: string;
  on?: string;
  isolation?: string;
  name?: string;
  tui?: boolean;
  fork?: string;
  restart?: string;
}

/** Each refused combination of flags, in the CLI's words. */
const CONFLICT: Record<StartConflict, string> = {
  seal_without_group: "--seal goes with --group",
  agent_and_resume: "give either --agent (a new child) or --resume <id> (an existing one), not both",
  group_with_resume: "--group takes new children: use it with --agent, not --resume",
  backend_with_resume: "--resume continues a child where it ran: no --backend, --place, --on or --in",
  on_with_place: "give one of --on <host>, --place <name> or --in container",
  fork_with_resume:
    "--fork starts a new child from another's conversation; --resume continues that child itself",
  resume_with_command_or_cwd:
    "--resume continues a child as it was: no argv after --, no --cwd, no --isolation",
  name_with_resume: "--resume continues a child under the name it has: no --name",
  tui_with_resume: "--resume continues a child in the mode it ran in: no --tui",
  caps_with_resume: "caps are set when a child is spawned: not with --resume",
  restart_with_resume: "--restart is set when a child is spawned: not with --resume (it keeps its own)",
  verify_with_resume: "--verify is set when a child is spawned: not with --resume (it keeps its own)",
};

/** A bad --restart is refused before anything starts (the core says it again for the library). */
function checkedRestart(text: string): string {
  if (parseRestart(text) === undefined)
    throw new MusterError(
      "invalid_argument",
      `--restart must be ${RESTART_RULE}, not ${JSON.stringify(text)}`,
    );
  return text;
}

export function registerSpawn(program: Command): void {
  common(
    capOptions(
      verifyOptions(
        containerOptions(
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
              "agent profile for a new child (muster agents lists them; default $MUSTER_AGENT or mock)",
            )
            .option(
              "-r, --resume <id>",
              "continue a settled child of this primary instead (its pane, or a new one)",
            )
            .option("-f, --file <path>", "read the prompt from a file (- for stdin)")
            .option("-w, --wait", "wait for the first turn and print its result")
            .option("--timeout <duration>", "with --wait: give up after this long (e.g. 30s, 5m)")
            .option("--cwd <dir>", "working directory of the child (default: here)")
            .option(
              "--model <model>",
              "model (provider:model or the runner's spelling; muster models lists them)",
            )
            .option(
              "--reasoning <level>",
              "reasoning level for the model (muster models --model <m> lists them)",
            )
            .option("--split", "inside tmux: open as a visible split instead of a background window")
            .option(
              "--backend <name>",
              "where a new child runs: tmux, zellij, pty (no multiplexer), or a backend loaded by MUSTER_BACKEND_MODULE (default $MUSTER_BACKEND; zellij inside Zellij; else tmux; pty where neither tmux nor Zellij is on PATH)",
            )
            .option(
              "--place <name>",
              "where the child's host runs: local (this machine) or a place loaded by MUSTER_BACKEND_MODULE, as <kind>:<target> (default $MUSTER_PLACE, else local)",
            )
            .option(
              "--on <host>",
              "run the child on an SSH host named with muster hosts add (its place is ssh:<host>); any: the host with the fewest busy children",
            ),
        )
          .option(
            "--group <id>",
            "deliver the first result together with the rest of this group (muster wait --group)",
          )
          .option("--seal", "with --group: seal the group after this child joins (no more members)")
          .option(
            "-n, --name <label>",
            `a label for the new child, unique in this workspace, usable wherever its id is (${NAME_RULE.replaceAll("`", "")})`,
          )
          .option(
            "--tui",
            `run the agent CLI's own TUI in the pane (${TUI_RUNNERS().join(", ")}): muster still records each turn`,
          )
          .option(
            "--isolation <mode>",
            "worktree: run in a git worktree of its own, on branch muster/<name or short id>",
          )
          .option(
            "--best-of <n>",
            "best-of-N: n children (2-8) on the same task, each in a git worktree of its own, in a completion group of their own; prints the group (muster compare <group>)",
          )
          .option(
            "--agents <list>",
            "with --best-of: the candidates' agents, comma-separated, taken in turn (alone: one candidate each)",
          )
          .option(
            "--restart <policy>",
            `on-lost[:N]: a turn whose host or agent dies is restarted on the same conversation with a note of what happened, at most N times (default ${DEFAULT_RESTARTS}, at most ${MAX_RESTARTS}) with backoff, then settles lost naming every death; no (the default) overrides the agent's restart:`,
          )
          .option(
            "--fork <id>",
            "start from this child's conversation so far (its tasks and answers; default agent: its agent), to take its work another way while it goes on; inside a child, --fork $MUSTER_CHILD_ID hands over your own",
          ),
      ),
      "this child and its children",
    ),
  ).action(async (operand: string | undefined, operands: string[], flags: SpawnFlags, cmd: Command) => {
    const { prompt, argv } = promptAndCommand(
      // Commander keeps the command line it parsed on the root (rawArgs, not in its typings).
      (cmd.parent as { rawArgs?: string[] } | null)?.rawArgs ?? [],
      operand,
      operands,
      flags.file !== undefined,
    );
    const m = muster(flags);
    const caps = capsFrom(flags);
    // Checked before anything is spawned: a bad --timeout leaves no child behind.
    const timeout = flags.timeout ? { timeoutMs: parseTimeout(flags.timeout) } : {};
    const container = containerFrom(flags);
    const verify = verifyFrom(flags);
    const req = {
      ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
      ...(flags.resume !== undefined ? { resume: flags.resume } : {}),
      ...(flags.model ? { model: flags.model } : {}),
      ...(flags.reasoning ? { reasoning: flags.reasoning } : {}),
      ...(argv.length > 0 ? { command: argv } : {}),
      ...(flags.cwd ? { cwd: flags.cwd } : {}),
      ...(flags.split ? { placement: "split" as const } : {}),
      ...(flags.group !== undefined ? { group: flags.group } : {}),
      ...(flags.seal ? { seal: true } : {}),
      ...(flags.backend !== undefined ? { backend: flags.backend } : {}),
      ...(flags.place !== undefined ? { place: flags.place } : {}),
      ...(flags.on !== undefined ? { on: flags.on } : {}),
      ...(container ? { container } : {}),
      ...(flags.isolation !== undefined ? { isolation: flags.isolation } : {}),
      ...(caps ? { caps } : {}),
      ...(flags.restart !== undefined ? { restart: checkedRestart(flags.restart) } : {}),
      ...(flags.name !== undefined ? { name: flags.name } : {}),
      ...(flags.tui ? { tui: true } : {}),
      ...(flags.fork !== undefined ? { fork: flags.fork } : {}),
      ...(verify ? { verify } : {}),
    };
    // A best-of run's refusals first, in its own words; then the rules every start follows.
    const best = bestOfFrom(flags);
    const conflict = m.startConflict(req);
    if (conflict) throw new MusterError("invalid_argument", CONFLICT[conflict]);
    if (best) {
      const { resume: _r, group: _g, seal: _s, name: _n, fork: _f, ...spawn } = req;
      return runBestOf(
        m,
        best,
        { ...spawn, prompt: readPrompt(prompt, flags.file), onProgress: (text) => warn(`muster: ${text}\n`) },
        { json: !!flags.json, wait: !!flags.wait, ...timeout },
      );
    }
    const started: { id: string; turnId: string; warnings: string[]; paused?: TreePauseView } = await m.start(
      {
        ...req,
        prompt: readPrompt(prompt, flags.file),
        onProgress: (text) => warn(`muster: ${text}\n`),
      },
    );
    for (const w of started.warnings) warn(`muster: warning: ${w}\n`);
    if (started.paused)
      warn(`muster: ${treePausedLine(started.paused)}: this child's first turn waits until then\n`);
    if (!flags.wait) {
      if (flags.json) printJson(started);
      else {
        say(`${started.id}\n`);
        if (process.stderr.isTTY)
          warn(
            withSelf(`muster: muster wait ${shortId(started.id)} · muster attach ${shortId(started.id)}\n`),
          );
      }
      return;
    }
    const outcome = await waitWithProgress(
      m,
      [started.id],
      {
        mode: "all",
        turns: new Map([[started.id, started.turnId]]),
        ...timeout,
      },
      !!flags.json,
    );
    // What the agent's session could not apply is known only once it opened (ACP: --model on no model choice).
    const opened = (await m.view(started.id)).agentSession;
    const late = opened?.turnId === started.turnId ? (opened.warnings ?? []) : [];
    for (const w of late) warn(`muster: warning: ${w}\n`);
    const shown = { ...started, warnings: [...started.warnings, ...late] };
    printResults(outcome, !!flags.json, { [flags.resume !== undefined ? "resumed" : "spawned"]: shown });
  });
}
