import type { Command } from "commander";
import { ENV } from "../../base/settings/resolve.js";
import {
  MAX_LIMIT,
  type ModelQuery,
  type ModelsAnswer,
  models,
  type SettingSource,
} from "../../core/catalog.js";
import { workingDir } from "../../util/cwd.js";
import { parsePositiveInt, table } from "../format.js";
import { printJson, say } from "../output.js";
import { compatFlag, displayPath, printWarnings } from "./agents.js";

interface ModelsFlags {
  provider?: string;
  query?: string;
  limit?: string;
  model?: string;
  agent?: string;
  json?: boolean;
}

function sourceLabel(s: SettingSource | null, what: "model" | "reasoning"): string {
  if (s === null) return "";
  const label = {
    call: "given",
    profile: "profile",
    env: ENV[what],
    config: "config",
    runner: "runner default",
    last: "last turn",
  }[s];
  return ` (${label})`;
}

const list = (xs: string[]): string => (xs.length > 0 ? xs.join(", ") : "-");

function printHuman(a: ModelsAnswer): void {
  const out = (s: string): void => {
    say(`${s}\n`);
  };
  if (a.kind === "defaults") {
    const d = a.defaults;
    out(
      table([
        ["default agent", `${d.agent} (runner ${d.runner})`],
        ["model", `${d.model ?? "-"}${sourceLabel(d.modelSource, "model")}`],
        ["reasoning", `${d.reasoning ?? "-"}${sourceLabel(d.reasoningSource, "reasoning")}`],
      ]),
    );
    const rows = [["RUNNER", "PROVIDER", "MODELS", "ACCEPTS", "DEFAULT MODEL"]];
    for (const r of a.runners)
      rows.push([
        r.available ? r.runner : `${r.runner} (not built in yet)`,
        r.provider,
        String(r.models),
        r.open ? "any id" : "listed only",
        r.defaultModel ?? "-",
      ]);
    out(`\n${table(rows)}\n`);
    out("Ask: --query <text> [--provider p] [--limit n] · --model <provider:model> · --agent <name>");
  } else if (a.kind === "search") {
    if (a.total === 0) {
      out("no matching models");
      return;
    }
    const rows = [["MODEL", "RUNNER", "REASONING", "DEFAULT"]];
    for (const m of a.matches) rows.push([m.id, m.runner, list(m.reasoning), m.defaultReasoning ?? "-"]);
    out(table(rows));
    out(
      a.more
        ? `${a.matches.length} of ${a.total} shown; narrow with --query or raise --limit (max ${MAX_LIMIT})`
        : `${a.total} shown`,
    );
  } else if (a.kind === "model") {
    out(
      table([
        ["model", a.id],
        ["provider", a.provider],
        ["runner", list(a.runners)],
        ["reasoning", list(a.reasoning)],
        ["default", a.defaultReasoning ?? "-"],
      ]),
    );
  } else {
    out(
      table([
        ["agent", `${a.agent} (${displayPath(a.source)})`],
        ["runner", a.runnerAvailable ? a.runner : `${a.runner} (not available yet)`],
        ["model", `${a.model ?? "-"}${sourceLabel(a.modelSource, "model")}`],
        ["reasoning", `${a.reasoning ?? "-"}${sourceLabel(a.reasoningSource, "reasoning")}`],
        ["valid", a.validReasoning ? list(a.validReasoning) : "any (the runner's catalog does not list it)"],
      ]),
    );
  }
}

/** `muster models`: one bounded catalog question per call. */
export function registerModels(program: Command): void {
  program
    .command("models")
    .summary("ask the model catalog one bounded question")
    .description(
      "Ask the model catalog one question; it never prints the whole catalog. Without options: the current " +
        "default model and reasoning (and where each comes from) plus runners, providers and model counts.",
    )
    .option("--provider <name>", "search: only this provider's models")
    .option("--query <text>", "search: models whose id contains this text (case-insensitive)")
    .option("--limit <n>", `search: at most this many matches (default 10, max ${MAX_LIMIT})`)
    .option(
      "--model <id>",
      "one model (provider:model or a runner's own id): its runner and reasoning levels",
    )
    .option(
      "--agent <name>",
      "one agent profile: its effective model and reasoning, and where each comes from",
    )
    .option("--json", "print one JSON document on stdout, nothing else (warnings go in its warnings array)")
    .option("--no-compat", "with --agent: ignore other harnesses' agent folders")
    .action((flags: ModelsFlags, cmd: Command) => {
      const q: ModelQuery = {
        ...(flags.provider !== undefined ? { provider: flags.provider } : {}),
        ...(flags.query !== undefined ? { query: flags.query } : {}),
        ...(flags.limit !== undefined ? { limit: parsePositiveInt(flags.limit, "--limit", MAX_LIMIT) } : {}),
        ...(flags.model !== undefined ? { model: flags.model } : {}),
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
      };
      const answer = models(q, { cwd: workingDir(), env: process.env, ...compatFlag(cmd) });
      printWarnings(answer.warnings);
      if (flags.json) return printJson(answer);
      printHuman(answer);
    });
}
