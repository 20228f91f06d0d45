import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import type { Caps } from "../../core/caps.js";
import { type CapFlags, capOptions, capsFrom } from "../caps-flags.js";
import { type CommonOptions, common, muster } from "../context.js";
import { printJson, say } from "../output.js";

const positive = (s: string, what: string): number => {
  const n = Number(s);
  if (!Number.isFinite(n) || n <= 0)
    throw new MusterError("invalid_argument", `${what} must be a positive number, not "${s}"`);
  return n;
};

export function registerBudget(program: Command): void {
  common(
    capOptions(
      program
        .command("budget")
        .summary("the tree's shared budget: show it, set it, clear it")
        .description(
          "A budget shared by every child of this primary (turns, tokens, cost where runners report them), counted from when it was set (changing it keeps that start; --clear then set to start over). When it is spent, running turns finish, new turns settle as exhausted (exit 4) without running (and use nothing).",
        )
        .option("--turns <n>", "turns the whole tree may run")
        .option("--tokens <n>", "input + output tokens the whole tree may use")
        .option("--cost <usd>", "US dollars the whole tree may spend")
        .option("--clear", "remove the budget"),
      "every turn of the tree; unlike the limits above, it ends running turns",
    ),
  ).action(
    async (
      flags: CommonOptions & CapFlags & { turns?: string; tokens?: string; cost?: string; clear?: boolean },
    ) => {
      const m = muster(flags);
      const limits = flags.turns !== undefined || flags.tokens !== undefined || flags.cost !== undefined;
      const caps = capsFrom(flags);
      if (flags.clear && (limits || caps))
        throw new MusterError("invalid_argument", "--clear removes the budget: give no limits with it");
      if (flags.clear) m.setBudget(null);
      else if (limits || caps) {
        // Limits and caps are set apart: setting one kind keeps the other as it was.
        const before = m.budget().budget;
        m.setBudget({
          ...(limits
            ? {
                ...(flags.turns !== undefined ? { turns: Math.floor(positive(flags.turns, "--turns")) } : {}),
                ...(flags.tokens !== undefined
                  ? { tokens: Math.floor(positive(flags.tokens, "--tokens")) }
                  : {}),
                ...(flags.cost !== undefined ? { cost: positive(flags.cost, "--cost") } : {}),
              }
            : {
                ...(before?.turns !== undefined ? { turns: before.turns } : {}),
                ...(before?.tokens !== undefined ? { tokens: before.tokens } : {}),
                ...(before?.cost !== undefined ? { cost: before.cost } : {}),
              }),
          ...((caps ?? before?.caps) ? { caps: caps ?? before?.caps } : {}),
        });
      }
      const b = m.budget();
      if (flags.json) return printJson(b);
      const lim = (used: number, max: number | undefined, unit = "") =>
        `${unit}${used}${max !== undefined ? ` of ${unit}${max}` : " (no limit)"}`;
      say(
        `turns   ${lim(b.used.turns, b.budget?.turns)}\ntokens  ${lim(b.used.tokens, b.budget?.tokens)}\ncost    ${lim(Math.round(b.used.cost * 10000) / 10000, b.budget?.cost, "$")}\n${b.budget?.since ? `since   ${b.budget.since}\n` : ""}${b.budget?.caps ? `caps    ${capsLine(b.budget.caps)}\n` : ""}${b.exhausted ? `${b.exhausted}: new turns settle as exhausted\n` : ""}`,
      );
    },
  );
}

const capsLine = (c: Caps): string =>
  Object.entries(c)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
