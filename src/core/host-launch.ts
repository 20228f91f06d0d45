import * as path from "node:path";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { MusterError } from "./errors.js";

// Prompts travel as files (inbox/, prompts/), never through a pane or an event record, so this
// only bounds memory; a single argv word is capped by the OS at 128 KiB, larger prompts use --file.
export const MAX_PROMPT_BYTES = 1024 * 1024;
// The child host as one bundled file (scripts/bundle.mjs): it loads ~30 ms faster than its module graph.
const HOST_SCRIPT = path.join(PACKAGE_ROOT, "dist", "child", "host.bundle.js");

/**
 * The pane's command. The host gets its runners' environment from env.json, so its own start can skip
 * what only slows node down (NODE_EXTRA_CA_CERTS: ~50 ms of certificate loading here).
 */
export function hostArgv(dir: string): string[] {
  return ["env", "-u", "NODE_EXTRA_CA_CERTS", process.execPath, HOST_SCRIPT, dir];
}

export function checkPrompt(prompt: string): void {
  if (prompt.trim() === "") throw new MusterError("usage", "the prompt is empty");
  const bytes = Buffer.byteLength(prompt);
  if (bytes > MAX_PROMPT_BYTES) {
    throw new MusterError(
      "usage",
      `the prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} (put the text in a file and refer to it in the prompt)`,
    );
  }
}
