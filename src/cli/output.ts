import { isMusterError, type MusterErrorCode } from "../core/errors.js";
import { selfCommand } from "../util/self-bin.js";
import { visible } from "./sanitize.js";

/** CLI exit codes (README "Exit codes" and `muster --help`). */
export const EXIT = {
  ok: 0,
  errored: 1,
  usage: 2,
  cancelled: 3,
  exhausted: 4,
  lost: 5,
  timeout: 124,
  interrupted: 130,
} as const;

export const EXIT_TABLE = `Exit codes:
  0    completed / ok            3    cancelled                  124  timed out waiting (the child keeps running)
  1    errored / runtime error   4    exhausted or incomplete    130  interrupted
  2    usage or validation error (nothing created)                5    lost (child host or pane died)`;

const ERROR_EXIT: Record<MusterErrorCode, number> = {
  usage: EXIT.usage,
  not_found: EXIT.usage,
  invalid_id: EXIT.usage,
  not_running: EXIT.usage,
  mux_unavailable: EXIT.errored,
  output_too_large: EXIT.exhausted,
  integrity: EXIT.errored,
  internal: EXIT.errored,
};

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
  process.stdout.write(`${text}\n`);
}

/** Human output on stdout; whatever a child put in it is shown, never obeyed by the terminal. */
export const say = (text: string): void => {
  process.stdout.write(visible(text));
};

/** Human output on stderr, made safe like `say`. */
export const warn = (text: string): void => {
  process.stderr.write(visible(text));
};

/**
 * A child's answer on stdout: the exact bytes when stdout is not a terminal (a pipe or a file gets what the
 * child wrote) or with `raw`; on a terminal, made safe like `say`.
 */
export function printAnswer(text: string, raw = false): void {
  process.stdout.write(raw || !process.stdout.isTTY ? text : visible(text));
}

/** One line on stderr (and one JSON document on stdout with --json); returns the exit code. */
export function reportError(e: unknown, json: boolean): number {
  const code = isMusterError(e) ? e.code : "internal";
  const message = isMusterError(e) ? withSelf(e.forSurface("cli")) : ((e as Error)?.message ?? String(e));
  const exit = isMusterError(e) ? ERROR_EXIT[e.code] : EXIT.errored;
  if (json) printJson({ error: { code, message } });
  warn(`muster: ${message.split("\n")[0]}\n`);
  if (!isMusterError(e) && process.env.MUSTER_DEBUG) process.stderr.write(`${(e as Error)?.stack}\n`);
  return exit;
}

/** A hint's `muster …` commands as this user can run them: `npx muster …` when `muster` on PATH is not this install. */
export function withSelf(text: string): string {
  if (!/\bmuster [a-z]/.test(text)) return text;
  const me = selfCommand();
  return me === "muster" ? text : text.replace(/(?<![\w/.-])muster (?=[a-z])/g, `${me} `);
}
