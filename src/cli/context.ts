import * as fs from "node:fs";
import type { Command } from "commander";
import { MusterError } from "../core/errors.js";
import { createMuster, type Muster } from "../core/muster.js";

/** Options every command accepts. */
export interface CommonOptions {
  json?: boolean;
  primary?: string;
}

/** The core for this invocation (the primary comes from --primary, MUSTER_PRIMARY or the workspace); it writes nothing until a command does. */
export function muster(opts: CommonOptions): Muster {
  return createMuster(opts.primary ? { primary: opts.primary } : {});
}

/** Adds --json and --primary to a command. */
export function common(cmd: Command): Command {
  return cmd
    .option("--json", "print one JSON document on stdout, nothing else")
    .option(
      "--primary <id>",
      "act for this primary: its id, the short id ls --all shows, or a unique prefix (default: MUSTER_PRIMARY, else this repository's or directory's)",
    );
}

/** The prompt from the argument, --file <path>, or --file - (stdin), exactly as given. */
export function readPrompt(arg: string | undefined, file: string | undefined): string {
  if (file !== undefined && arg !== undefined)
    throw new MusterError("usage", "give the prompt either as an argument or with --file, not both");
  if (file === undefined) {
    if (arg === undefined) throw new MusterError("usage", "missing prompt");
    return arg;
  }
  try {
    return fs.readFileSync(file === "-" ? 0 : file, "utf8");
  } catch (e) {
    throw new MusterError("usage", `cannot read prompt file ${file}: ${(e as Error).message}`, { cause: e });
  }
}
