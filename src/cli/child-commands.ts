/**
 * Commands an agent runs inside its pane (done, error, progress). Kept free of heavy imports:
 * bin/muster.js loads only this file for them, so they start about as fast as bare node.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const CHILD_HELP = `Inside a child's pane (for agents):
  muster progress <text>        report progress (shown in the pane and in muster ls)
  muster done [text] [--file f] end the turn with this result (the runner's own answer is replaced)
  muster error <text>           end the turn as errored with this message`;

const USAGE: Record<string, string> = {
  progress:
    "usage: muster progress <text>\nReport progress of the current turn (recorded as a progress event).",
  done: "usage: muster done [text] [--file <path>]\nSet this turn's result explicitly; the turn completes when the agent ends it (its final record, or its exit).",
  error: "usage: muster error <text>\nMark this turn errored with the given message.",
};

/** Runs a child-side command; returns the exit code. */
export function runChildCommand(argv: string[]): number {
  const [kind, ...rest] = argv as [keyof typeof USAGE, ...string[]];
  if (rest.includes("--help") || rest.includes("-h")) {
    process.stdout.write(`${USAGE[kind]}\n`);
    return 0;
  }
  const dir = process.env.MUSTER_ARTIFACT_DIR;
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
    try {
      text = fs.readFileSync(file, "utf8");
    } catch (e) {
      process.stderr.write(`muster: cannot read ${file}: ${(e as Error).message}\n`);
      return 2;
    }
  }
  if (kind !== "done" && text.trim() === "") {
    process.stderr.write(`${USAGE[kind]}\n`);
    return 2;
  }
  const controlDir = path.join(dir, "control");
  const name = `${Date.now().toString().padStart(15, "0")}-${randomBytes(4).toString("hex")}.json`;
  const tmp = path.join(controlDir, `.${name}.tmp`);
  try {
    fs.writeFileSync(tmp, JSON.stringify({ kind, text }), { mode: 0o600 });
    fs.renameSync(tmp, path.join(controlDir, name));
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    process.stderr.write(`muster: cannot write to ${controlDir}: ${(e as Error).message}\n`);
    return 1;
  }
  return 0;
}
