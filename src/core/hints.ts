import type { NextStep } from "../base/errors.js";
import { isResumableFile, sessionFileOf } from "../sessions/store.js";
import type { LoadedChild } from "./children.js";

/**
 * How to go on with a child that can take no more turns in its pane: resume it when some turn completed
 * (what `spawn --resume` requires), else start a new child of the same agent, where it ran (`cwd` only when
 * that is not `here`), with the same command — a suggestion to resume would only fail "not resumable".
 */
export function continueHint(c: LoadedChild, here: string): NextStep {
  if (isResumableFile(sessionFileOf(c.files.dir))) return { action: "resume", id: c.entry.id };
  const argv = c.meta?.profile.command;
  return {
    action: "spawn",
    agent: c.entry.agent,
    ...(c.entry.cwd !== here ? { cwd: c.entry.cwd } : {}),
    ...(c.entry.runner === "command" && argv ? { argv } : {}),
  };
}

/** Why a `spawn` next step is offered instead of a resume, for the message it goes with. */
export const NOT_RESUMABLE_NOTE = "no turn of it completed, so it cannot be resumed";
