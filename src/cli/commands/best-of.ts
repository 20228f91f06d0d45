/** `spawn --best-of N [--agents a,b,c]` and `muster compare <group> [--judge <agent>]`: best-of-N runs. */
import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { BEST_OF_MAX, BEST_OF_MIN, type BestOfConflict, bestOfConflict } from "../../core/best-of.js";
import type { CompareRow, CompareView } from "../../core/compare.js";
import type { Muster } from "../../core/muster.js";
import type { SpawnOptions } from "../../core/spawn.js";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster } from "../context.js";
import { bestOfExit, EXIT } from "../exit-codes.js";
import { clip, humanDuration, parseTimeout, table } from "../format.js";
import { ExitWith, printJson, say, warn } from "../output.js";
import { visible, visibleLine } from "../sanitize.js";
import { printResults, waitWithProgress } from "./wait.js";

/** Each refused combination, in the CLI's words. */
const CONFLICT: Record<BestOfConflict, string> = {
  count: `--best-of takes a whole number from ${BEST_OF_MIN} to ${BEST_OF_MAX}`,
  no_count: "--agents takes a list of agents, such as --agents mock,claude",
  agent_and_agents: "give --agent (N candidates of one agent) or --agents a,b,c, not both",
  empty_agent: "--agents has an empty name; list them as --agents a,b,c",
  isolation: "--best-of runs every candidate in a git worktree of its own: no other --isolation",
  group: "--best-of makes a completion group of its own: no --group or --seal",
  name: "--best-of names its candidates after its group: no --name",
  fork: "--best-of starts every candidate from the task alone: no --fork",
  resume: "--best-of starts new children: no --resume",
};

export interface BestOfFlags {
  bestOf?: string;
  agents?: string;
  agent?: string;
  resume?: string;
  fork?: string;
  group?: string;
  seal?: boolean;
  name?: string;
  isolation?: string;
}

/** The best-of part of `spawn`'s flags, checked (nothing is created yet); undefined when it is no best-of run. */
export function bestOfFrom(flags: BestOfFlags): { n?: number; agents?: string[] } | undefined {
  if (flags.bestOf === undefined && flags.agents === undefined) return undefined;
  const n =
    flags.bestOf === undefined
      ? undefined
      : /^\d+$/.test(flags.bestOf.trim())
        ? Number(flags.bestOf)
        : Number.NaN;
  const agents = flags.agents?.split(",").map((a) => a.trim());
  const { bestOf: _n, agents: _a, ...rest } = flags;
  const conflict = bestOfConflict({
    ...rest,
    ...(n !== undefined ? { n } : {}),
    ...(agents ? { agents } : {}),
  });
  if (conflict) throw new MusterError("invalid_argument", CONFLICT[conflict]);
  return { ...(n !== undefined ? { n } : {}), ...(agents ? { agents } : {}) };
}

/** Starts a best-of run and prints it; with `wait`, waits for every candidate and prints the group's results. */
export async function runBestOf(
  m: Muster,
  best: { n?: number; agents?: string[] },
  spawn: Omit<SpawnOptions, "group" | "seal" | "name" | "fork" | "outputSchema">,
  out: { json: boolean; wait: boolean; timeoutMs?: number },
): Promise<void> {
  const started = await m.bestOf({ ...spawn, ...best });
  for (const w of started.warnings) warn(`muster: warning: ${w}\n`);
  const shown = {
    group: started.group,
    children: started.children.map((c) => ({
      n: c.n,
      id: c.id,
      agent: c.agent,
      branch: c.branch,
      turnId: c.turnId,
      ...(c.name !== undefined ? { name: c.name } : {}),
    })),
  };
  if (!out.wait) {
    if (out.json) return printJson({ ...shown, warnings: started.warnings });
    say(`${started.group}\n`);
    say(`${table(started.children.map((c) => [`  ${c.n}`, c.id, c.agent, c.branch]))}\n`);
    if (process.stderr.isTTY)
      warn(`muster: muster wait --group ${started.group} · muster compare ${started.group}\n`);
    return;
  }
  const outcome = await waitWithProgress(
    m,
    { group: started.group, bestOf: true },
    out.timeoutMs !== undefined ? { timeoutMs: out.timeoutMs } : {},
    out.json,
  );
  if (!out.json) say(`${started.group}\n`);
  printResults(outcome, out.json, shown, bestOfExit);
  if (!out.json) warn(`muster: compare them: muster compare ${started.group}\n`);
}

interface CompareFlags extends CommonOptions {
  judge?: string;
  timeout?: string;
}

export function registerCompare(program: Command): void {
  common(
    program
      .command("compare")
      .summary("a best-of run's candidates side by side; --judge asks an agent to pick")
      .description(
        "Show the candidates of a best-of run (spawn --best-of) side by side: status, acceptance check, branch, files changed, tokens and cost, duration, and the judge's verdict once recorded. --judge <agent> spawns one more child of that agent, in this checkout, with the task and every candidate's outcome, check and diff (32 KiB each), and records the winner it names with its reasoning; take the winner with muster merge <id>.",
      )
      .argument("<group>", "the group id spawn --best-of printed")
      .option("--judge <agent>", "ask this agent to pick the winner (its verdict is recorded with the run)")
      .option("--timeout <duration>", "with --judge: give up on the judge after this long (e.g. 5m)"),
  ).action(async (group: string, flags: CompareFlags) => {
    const timeout = flags.timeout !== undefined ? { timeoutMs: parseTimeout(flags.timeout) } : {};
    if (flags.timeout !== undefined && flags.judge === undefined)
      throw new MusterError("invalid_argument", "--timeout goes with --judge");
    const m = muster(flags);
    if (flags.judge === undefined) {
      const view = await m.compare(group);
      return flags.json ? printJson(view) : say(compareText(view));
    }
    const outcome = await m.judge(group, flags.judge, {
      ...timeout,
      onJudge: (id) => {
        if (!flags.json) warn(`muster: judge ${shortId(id)} (${flags.judge}) is looking at ${group}\n`);
      },
    });
    if (!outcome.recorded) {
      if (flags.json) printJson(outcome);
      else
        warn(
          `muster: no verdict recorded: ${visibleLine(outcome.reason)} (judge ${shortId(outcome.judge)}: muster result ${shortId(outcome.judge)})\n`,
        );
      throw new ExitWith(EXIT.errored);
    }
    if (flags.json) return printJson(outcome.view);
    say(compareText(outcome.view));
  });
}

const verifyCell = (r: CompareRow): string => {
  const v = r.verified;
  if (!v) return "—";
  if (v.exitCode === 0) return "passed";
  return v.exitCode === null ? "failed (killed)" : `failed exit ${v.exitCode}`;
};

const tokens = (r: CompareRow): string => (r.usage ? String(r.usage.input + r.usage.output) : "—");
const cost = (r: CompareRow): string => (r.usage?.cost !== undefined ? `$${r.usage.cost.toFixed(4)}` : "—");

/** The side-by-side table, the verdict if any, and what to do next. */
export function compareText(view: CompareView): string {
  const rows = [
    ["#", "ID", "AGENT", "STATUS", "VERIFY", "BRANCH", "FILES", "+/-", "TOKENS", "COST", "DURATION"],
  ];
  for (const r of view.children) {
    const won = view.verdict?.winner === r.id;
    rows.push([
      `${won ? "*" : " "}${r.n}`,
      shortId(r.id),
      r.agent,
      r.status === "removed" ? `removed${r.branchKept ? " (branch kept)" : ""}` : r.status,
      verifyCell(r),
      r.branch,
      r.diff ? String(r.diff.files) : "—",
      r.diff ? `+${r.diff.insertions} -${r.diff.deletions}` : "—",
      tokens(r),
      cost(r),
      r.durationMs !== undefined ? humanDuration(r.durationMs) : "—",
    ]);
  }
  const lines = [`${view.group} · ${clip(visibleLine(view.task.split("\n")[0] ?? ""), 100)}`, table(rows)];
  const v = view.verdict;
  if (v) {
    lines.push(
      "",
      `verdict: candidate ${v.n} (${shortId(v.winner)}), judged by ${v.judgeAgent} ${shortId(v.judge)}:`,
      ...visible(v.reasoning.trim())
        .split("\n")
        .map((l) => `  ${l}`),
      "",
      `take it: muster merge ${shortId(v.winner)}`,
    );
  } else if (view.settled)
    lines.push("", `pick one: muster compare ${view.group} --judge <agent>, or muster merge <id>`);
  return `${lines.join("\n")}\n`;
}
