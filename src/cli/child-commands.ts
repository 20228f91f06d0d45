/**
 * Commands an agent runs inside its pane (done, error, progress). Kept free of heavy imports:
 * bin/muster.js loads only this file for them, so they start about as fast as bare node.
 */
import * as path from "node:path";
import { rawSetting } from "../base/settings/resolve.js";
import { dropJsonFile } from "../util/fsx.js";
import { pokeHost } from "../util/poke.js";
import { readFileBounded } from "../util/safe-read.js";
import { invalidUtf8At } from "../util/utf8.js";

export const CHILD_HELP = `Inside a child's pane (for agents):
  muster progress <text>        report progress (shown in the pane and in muster ls)
  muster done [text] [--file f] end the turn with this result (the runner's own answer is replaced)
  muster error <text>           end the turn as errored with this message
  muster ask <question> [--choices a,b] [--timeout 10m]
                                ask the parent; waits and prints its answer`;

const USAGE: Record<string, string> = {
  progress:
    "usage: muster progress <text>\nReport progress of the current turn (recorded as a progress event).",
  done: "usage: muster done [text] [--file <path>]\nSet this turn's result explicitly; the turn completes when the agent ends it (its final record, or its exit).",
  error: "usage: muster error <text>\nMark this turn errored with the given message.",
};

// The answer's limit (MAX_SNAPSHOT_BYTES, not imported: this path loads as little as it can): a longer one
// could only settle output_too_large, and the host reads a control request (JSON-escaped text) only up to a
// bound made for it. Progress text is cut to one event's size by the host.
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * The text of --file: a regular file (a symlink to one is fine; /dev/zero or a FIFO is refused, never read
 * or waited on) of at most MAX_FILE_BYTES, and UTF-8, refused like a prompt rather than silently replaced.
 */
function readTextFile(file: string, kind: string): { text: string } | { error: string } {
  let bytes: Buffer;
  try {
    bytes = readFileBounded(file, MAX_FILE_BYTES, { follow: true });
  } catch (e) {
    // A refusal names the file and why already ("refusing to read f: it is a FIFO").
    const refused = (e as { code?: unknown }).code === "integrity";
    return { error: refused ? (e as Error).message : `cannot read ${file}: ${(e as Error).message}` };
  }
  const at = invalidUtf8At(bytes);
  if (at >= 0)
    return {
      error: `${file} is not valid UTF-8 (byte 0x${bytes[at]!.toString(16)} at offset ${at}); muster ${kind} takes UTF-8 text (convert it first, e.g. with iconv)`,
    };
  return { text: bytes.toString("utf8") };
}

/** Runs a child-side command; returns the exit code. */
export function runChildCommand(argv: string[]): number {
  const [kind, ...rest] = argv as [keyof typeof USAGE, ...string[]];
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(`${USAGE[kind]}\n`);
    return 0;
  }
  const dir = rawSetting(process.env, "artifactDir");
  if (!dir) {
    process.stderr.write(
      `muster: \`muster ${kind}\` works only inside a child's pane (MUSTER_ARTIFACT_DIR is not set)\n`,
    );
    return 2;
  }
  let text = rest.join(" ");
  const fileAt = rest.indexOf("--file");
  if (fileAt >= 0) {
    const file = rest[fileAt + 1];
    if (!file) {
      process.stderr.write("muster: --file needs a path\n");
      return 2;
    }
    const read = readTextFile(file, kind);
    if ("error" in read) {
      process.stderr.write(`muster: ${read.error}\n`);
      return 2;
    }
    text = read.text;
  }
  if (kind !== "done" && text.trim() === "") {
    process.stderr.write(`${USAGE[kind]}\n`);
    return 2;
  }
  const controlDir = path.join(dir, "control");
  try {
    dropJsonFile(controlDir, { kind, text });
    pokeHost(dir);
  } catch (e) {
    process.stderr.write(`muster: cannot write to ${controlDir}: ${(e as Error).message}\n`);
    return 1;
  }
  return 0;
}
