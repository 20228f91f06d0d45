/**
 * A new child's acceptance check, from the call's `verify` over its profile's (field by field), checked and made
 * whole for the host: the argv it runs, how it reads, its corrections and its time bound.
 */
import type { VerifySpec } from "../artifacts/events.js";
import { MusterError } from "../base/errors.js";
import { VERIFY_DEFAULT_TIMEOUT_MS, VERIFY_MAX_RETRIES, type VerifyRequest } from "../base/verify-request.js";
import { MAX_TIMER_MS, MAX_TIMER_TEXT } from "../util/timer-limit.js";

/** The check a spawn records in meta.json, or undefined for none. */
export function verifySpecFor(
  call: VerifyRequest | undefined,
  profile: VerifyRequest | undefined,
): VerifySpec | undefined {
  if (call === undefined && profile === undefined) return undefined;
  const req: VerifyRequest = { ...profile, ...definedOnly(call ?? {}) };
  if (req.command === undefined)
    throw new MusterError(
      "invalid_argument",
      "verify retries and timeout go with a check to run: give verify a command (or the agent's profile one)",
    );
  const argv = commandArgv(req.command);
  const retries = req.retries ?? 0;
  if (!Number.isInteger(retries) || retries < 0 || retries > VERIFY_MAX_RETRIES)
    throw new MusterError(
      "invalid_argument",
      `verify retries must be a whole number from 0 to ${VERIFY_MAX_RETRIES} (got ${retries})`,
    );
  const timeoutMs = req.timeoutMs ?? VERIFY_DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    throw new MusterError("invalid_argument", `verify timeout must be above 0 and at most ${MAX_TIMER_TEXT}`);
  const command = typeof req.command === "string" ? req.command.trim() : req.command.join(" ");
  return { argv, command, retries, timeoutMs };
}

/** A command line runs under `sh -c` exactly as written (it is the user's own shell text); an argv runs as is. */
function commandArgv(command: string | string[]): string[] {
  if (typeof command === "string") {
    if (command.trim() === "") throw new MusterError("invalid_argument", "verify needs a command to run");
    if (command.includes("\0")) throw new MusterError("invalid_argument", "verify's command has a NUL byte");
    return ["sh", "-c", command];
  }
  if (
    command.length === 0 ||
    command.some((w) => typeof w !== "string" || w.includes("\0")) ||
    command[0] === ""
  )
    throw new MusterError("invalid_argument", "verify's argv must be a non-empty list of strings");
  return [...command];
}

function definedOnly(req: VerifyRequest): VerifyRequest {
  return Object.fromEntries(Object.entries(req).filter(([, v]) => v !== undefined)) as VerifyRequest;
}
