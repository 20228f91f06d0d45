import type { Command } from "commander";
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

/** A repeatable option's parser for commander: every value given, in order. */
export const collect = (v: string, all: string[] = []): string[] => [...all, v];

/** Adds --json and --primary to a command. */
export function common(cmd: Command): Command {
  return cmd
    .option("--json", "print one JSON document on stdout, nothing else")
    .option(
      "--primary <id>",
      "act for this primary: its id, the short id ls --all shows, or a unique prefix (default: MUSTER_PRIMARY, else this repository's or directory's)",
    );
}

export { readPrompt } from "./prompt.js";
