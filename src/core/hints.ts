import { isResumable, loadSession, sessionFileOf } from "../sessions/store.js";
import { shortId } from "../util/ids.js";
import { shellQuote } from "../util/text.js";
import type { LoadedChild } from "./children.js";
import type { NextStep } from "./errors.js";

/**
 * How to go on with a child that can take no more turns in its pane: resume it when some turn completed
 * (what `spawn --resume` requires), else start a new child of the same agent, where it ran, with the same
 * command — a suggestion to resume would only fail "not resumable".
 */
export function continueHint(c: LoadedChild, here: string): NextStep {
  const id = c.entry.id;
  if (isResumable(loadSession(sessionFileOf(c.files.dir)))) {
    return {
      cli: `continue it with: muster spawn --resume ${shortId(id)} "…"`,
      mcp: `continue it with the subagents_run tool: {"id": "${id}", "prompt": "…"}`,
    };
  }
  const cwd = c.entry.cwd !== here ? ` --cwd ${shellQuote([c.entry.cwd])}` : "";
  const argv = c.meta?.profile.command;
  const command = c.entry.runner === "command" && argv ? ` -- ${shellQuote(argv)}` : "";
  return {
    cli: `no turn of it completed, so it cannot be resumed; start a new one: muster spawn --agent ${c.entry.agent}${cwd} "…"${command}`,
    mcp: `no turn of it completed, so it cannot be resumed; start a new one with the subagents_run tool: {"agent": "${c.entry.agent}", "prompt": "…"}`,
  };
}
