import { isMusterError } from "../base/errors.js";
import { setting } from "../base/settings/resolve.js";
import { storageError } from "../base/storage-errors.js";
import { selfCommand } from "../util/self-bin.js";
import { ERROR_EXIT, EXIT } from "./exit-codes.js";
import { cliErrorText } from "./next-step.js";
import { visible, visibleLine } from "./sanitize.js";
import { stdoutIsTTY, writeStdout } from "./stdout.js";

/** Thrown by commands to end with a given exit code after their output is written. */
export class ExitWith extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}

/**
 * One JSON document on stdout. JSON.stringify escapes C0 controls but not C1 ones (U+0080–U+009F, which
 * some terminals obey as CSI/OSC): escape those too; they occur only inside strings, so the parsed value is
 * the same.
 */
export function printJson(value: unknown): void {
  const text = JSON.stringify(value, null, 2).replace(
    /[\u0080-\u009f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  writeStdout(`${text}\n`);
}

/** Human output on stdout; whatever a child put in it is shown, never obeyed by the terminal. */
export const say = (text: string): void => {
  writeStdout(visible(text));
};

/** Human output on stderr, made safe like `say`; nothing to say makes no stream (see stdout.ts). */
export const warn = (text: string): void => {
  if (text) process.stderr.write(visible(text));
};

/**
 * A child's answer on stdout: the exact bytes when stdout is not a terminal (a pipe or a file gets what the
 * child wrote) or with `raw`; on a terminal, made safe like `say`.
 */
export function printAnswer(text: string, raw = false): void {
  writeStdout(raw || !stdoutIsTTY() ? text : visible(text));
}

/**
 * One answer as `wait` and the `--wait` commands print it: byte-exact into a pipe or file; on a terminal, or
 * as one of several headed sections, it ends with a line break so what follows starts on a line of its own.
 */
export function printAnswerBlock(text: string, section = false): void {
  const closed = text === "" || text.endsWith("\n") || (!section && !stdoutIsTTY());
  printAnswer(closed ? text : `${text}\n`);
}

/** One line on stderr (and one JSON document on stdout with --json); returns the exit code. */
export function reportError(thrown: unknown, json: boolean): number {
  // A disk that is full or read-only is said in words, not as a bare errno.
  const e = storageError(thrown);
  const code = isMusterError(e) ? e.code : "internal";
  const message = isMusterError(e) ? withSelf(cliErrorText(e)) : cliErrorText(e);
  const exit = isMusterError(e) ? ERROR_EXIT[e.code] : EXIT.errored;
  // `next` as data too, for a program that wants to act on it rather than read the message.
  const next = isMusterError(e) && e.next ? { next: e.next } : {};
  const detail = isMusterError(e) && e.detail ? e.detail : undefined;
  if (json) printJson({ error: { code, message, ...next, ...(detail !== undefined ? { detail } : {}) } });
  warn(`muster: ${message.split("\n")[0]}\n`);
  if (detail !== undefined) for (const l of detail.split("\n")) warn(`  │ ${visibleLine(l)}\n`);
  if (!isMusterError(e) && setting(process.env, "debug")) process.stderr.write(`${(e as Error)?.stack}\n`);
  return exit;
}

/** A hint's `muster …` commands as this user can run them: `npx muster …` when `muster` on PATH is not this install. */
export function withSelf(text: string): string {
  if (!/\bmuster [a-z]/.test(text)) return text;
  const me = selfCommand();
  return me === "muster" ? text : text.replace(/(?<![\w/.-])muster (?=[a-z])/g, `${me} `);
}
