/**
 * `spawn --verify "<cmd>"` and its `--verify-retries` and `--verify-timeout`, read into a VerifyRequest. The
 * whole check (over the profile's `verify:`) is made and checked at spawn (core/verify.ts).
 */
import type { Command } from "commander";
import { MusterError } from "../base/errors.js";
import { VERIFY_MAX_RETRIES, type VerifyRequest } from "../base/verify-request.js";
import { parseTimeout } from "./format.js";

export interface VerifyFlags {
  verify?: string;
  verifyRetries?: string;
  verifyTimeout?: string;
}

export function verifyOptions(cmd: Command): Command {
  return cmd
    .option(
      "--verify <cmd>",
      "an acceptance check: after each answer, run this command line (sh -c) where the child works; the turn is completed only when it exits 0, else failed_verification (exit 6)",
    )
    .option(
      "--verify-retries <n>",
      `with --verify: send a failed check's output back to the child to fix, up to n times (0-${VERIFY_MAX_RETRIES}, default 0)`,
    )
    .option("--verify-timeout <duration>", "with --verify: each run's time bound (default 10m)");
}

/** The check the flags ask for, or undefined; the core refuses retries or a timeout with no check anywhere. */
export function verifyFrom(flags: VerifyFlags): VerifyRequest | undefined {
  const { verify, verifyRetries, verifyTimeout } = flags;
  if (verify === undefined && verifyRetries === undefined && verifyTimeout === undefined) return undefined;
  let retries: number | undefined;
  if (verifyRetries !== undefined) {
    retries = Number(verifyRetries);
    if (!/^\d+$/.test(verifyRetries.trim()) || retries > VERIFY_MAX_RETRIES)
      throw new MusterError(
        "invalid_argument",
        `--verify-retries must be a whole number from 0 to ${VERIFY_MAX_RETRIES} (got "${verifyRetries}")`,
      );
  }
  return {
    ...(verify !== undefined ? { command: verify } : {}),
    ...(retries !== undefined ? { retries } : {}),
    ...(verifyTimeout !== undefined ? { timeoutMs: timeoutOf(verifyTimeout) } : {}),
  };
}

function timeoutOf(s: string): number {
  try {
    return parseTimeout(s, "--verify-timeout");
  } catch (e) {
    throw new MusterError("invalid_argument", `--verify-timeout: ${(e as Error).message}`);
  }
}
