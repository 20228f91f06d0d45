import { isUtf8 } from "node:buffer";
import * as fs from "node:fs";
import { MusterError } from "../base/errors.js";
import { MAX_PROMPT_BYTES } from "../core/host-launch.js";
import { invalidUtf8At } from "../util/utf8.js";

export { invalidUtf8At };

// Prompts travel as JSON strings (inbox files), so they must be text: bytes that are not UTF-8 are refused,
// never replaced by U+FFFD behind the user's back. ignoreBOM: a leading BOM is part of the prompt, kept as given.
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function notUtf8(where: string, bytes?: Uint8Array, cause?: unknown): MusterError {
  const at = bytes ? invalidUtf8At(bytes) : -1;
  const detail = bytes && at >= 0 ? ` (byte 0x${bytes[at]!.toString(16)} at offset ${at})` : "";
  return new MusterError(
    "invalid_argument",
    `the prompt ${where} is not valid UTF-8${detail}; muster takes prompts as UTF-8 text (convert it first, e.g. with iconv)`,
    cause !== undefined ? { cause } : undefined,
  );
}

const tooLarge = (where: string): MusterError =>
  new MusterError(
    "invalid_argument",
    `the prompt ${where} is more than ${MAX_PROMPT_BYTES} bytes; the limit is ${MAX_PROMPT_BYTES} (put the text in a file and refer to it in the prompt)`,
  );

/** Reads at most limit+1 bytes from fd (a pipe or terminal may be non-blocking: EAGAIN waits and retries). */
function readUpTo(fd: number, limit: number): Buffer {
  const buf = Buffer.allocUnsafe(limit + 1);
  let got = 0;
  while (got < buf.length) {
    let n: number;
    try {
      n = fs.readSync(fd, buf, got, buf.length - got, null);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
      continue;
    }
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** A prompt file (or stdin for "-"): bounded read (a FIFO or /dev/zero cannot exhaust memory), strict UTF-8. */
function readPromptFile(file: string): string {
  const where = file === "-" ? "on stdin" : `in ${file}`;
  let bytes: Buffer;
  try {
    const fd = file === "-" ? 0 : fs.openSync(file, "r");
    try {
      bytes = readUpTo(fd, MAX_PROMPT_BYTES);
    } finally {
      if (fd !== 0) fs.closeSync(fd);
    }
  } catch (e) {
    throw new MusterError("invalid_argument", `cannot read prompt file ${file}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (bytes.length > MAX_PROMPT_BYTES) throw tooLarge(where);
  try {
    return strictUtf8.decode(bytes);
  } catch (e) {
    throw notUtf8(where, bytes, e);
  }
}

/**
 * Node decodes argv itself, turning invalid bytes into U+FFFD. A U+FFFD in the argument is legitimate when
 * the user typed one; it is a replacement when the raw word in /proc/self/cmdline is not UTF-8. (Without
 * /proc, Node's decoding stands.)
 */
function argvWasNotUtf8(arg: string): { raw: Buffer } | undefined {
  if (!arg.includes("\uFFFD")) return undefined;
  let cmdline: Buffer;
  try {
    cmdline = fs.readFileSync("/proc/self/cmdline");
  } catch {
    return undefined;
  }
  let start = 0;
  while (start < cmdline.length) {
    let end = cmdline.indexOf(0, start);
    if (end < 0) end = cmdline.length;
    const word = cmdline.subarray(start, end);
    if (!isUtf8(word) && word.toString("utf8") === arg) return { raw: word };
    start = end + 1;
  }
  return undefined;
}

/**
 * The prompt operand and the command's argv as the user meant them. Commander fills `[prompt]` before
 * `[argv...]` whichever side of `--` each word stood on, so with `--file` (the prompt comes from a file or
 * stdin) a first word after `--` is the command's, not a prompt. `raw` is the command line as given.
 */
export function promptAndCommand(
  raw: readonly string[],
  prompt: string | undefined,
  argv: string[],
  fromFile: boolean,
): { prompt: string | undefined; argv: string[] } {
  const dashes = raw.indexOf("--");
  const afterDashes = dashes < 0 ? 0 : raw.length - dashes - 1;
  if (fromFile && prompt !== undefined && afterDashes === argv.length + 1)
    return { prompt: undefined, argv: [prompt, ...argv] };
  return { prompt, argv };
}

/** The prompt from the argument, --file <path>, or --file - (stdin), exactly as given; UTF-8 text only. */
export function readPrompt(arg: string | undefined, file: string | undefined): string {
  if (file !== undefined && arg !== undefined)
    throw new MusterError(
      "invalid_argument",
      "give the prompt either as an argument or with --file, not both",
    );
  if (file !== undefined) return readPromptFile(file);
  if (arg === undefined) throw new MusterError("invalid_argument", "missing prompt");
  const bad = argvWasNotUtf8(arg);
  if (bad) throw notUtf8("argument", bad.raw);
  return arg;
}
