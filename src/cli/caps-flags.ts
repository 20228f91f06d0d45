/** The cap flags shared by `spawn` (one child and its children) and `budget` (the whole tree). */
import type { Command } from "commander";
import { MusterError } from "../base/errors.js";
import type { Caps } from "../core/caps.js";
import { timerProblem } from "../util/timer-limit.js";
import { parseDuration } from "./format.js";

export interface CapFlags {
  maxTime?: string;
  idleTimeout?: string;
  maxTurns?: string;
  maxToolCalls?: string;
  maxTokens?: string;
  maxCost?: string;
}

export function capOptions(cmd: Command, scope: string): Command {
  return cmd
    .option("--max-time <duration>", `cap: wall clock of each turn (${scope}), e.g. 10m`)
    .option("--idle-timeout <duration>", `cap: a turn's time without agent output (${scope})`)
    .option("--max-turns <n>", `cap: turns (${scope})`)
    .option("--max-tool-calls <n>", `cap: tool calls (${scope})`)
    .option("--max-tokens <n>", `cap: input + output tokens (${scope})`)
    .option("--max-cost <usd>", `cap: US dollars (${scope})`);
}

const positive = (s: string, flag: string, whole: boolean): number => {
  const n = Number(s);
  if (!Number.isFinite(n) || n <= 0 || (whole && !Number.isInteger(n)))
    throw new MusterError(
      "invalid_argument",
      `${flag} must be a positive ${whole ? "whole number" : "number"}, not "${s}"`,
    );
  return n;
};

const duration = (s: string, flag: string): number => {
  const ms = parseDuration(s);
  if (ms <= 0) throw new MusterError("invalid_argument", `${flag} must be longer than 0, not "${s}"`);
  const tooLong = timerProblem(ms, flag);
  if (tooLong) throw new MusterError("invalid_argument", `${tooLong}, not "${s}"`);
  return ms;
};

/** The caps the flags set (undefined when none is given). */
export function capsFrom(f: CapFlags): Caps | undefined {
  const caps: Caps = {
    ...(f.maxTime !== undefined ? { maxTimeMs: duration(f.maxTime, "--max-time") } : {}),
    ...(f.idleTimeout !== undefined ? { idleTimeoutMs: duration(f.idleTimeout, "--idle-timeout") } : {}),
    ...(f.maxTurns !== undefined ? { maxTurns: positive(f.maxTurns, "--max-turns", true) } : {}),
    ...(f.maxToolCalls !== undefined
      ? { maxToolCalls: positive(f.maxToolCalls, "--max-tool-calls", true) }
      : {}),
    ...(f.maxTokens !== undefined ? { maxTokens: positive(f.maxTokens, "--max-tokens", true) } : {}),
    ...(f.maxCost !== undefined ? { maxCost: positive(f.maxCost, "--max-cost", false) } : {}),
  };
  return Object.keys(caps).length > 0 ? caps : undefined;
}
