import { isMusterError, type NextStep } from "../base/errors.js";
import { shortId } from "../util/ids.js";
import { shellQuote } from "../util/text.js";

/** A next step as a command line to run (spelled `muster …`; `withSelf` makes it `npx muster …` where needed). */
export function cliNextStep(n: NextStep): string {
  switch (n.action) {
    case "resume":
      return `continue it with: muster spawn --resume ${shortId(n.id)} "…"`;
    case "spawn": {
      const cwd = n.cwd !== undefined ? ` --cwd ${shellQuote([n.cwd])}` : "";
      const argv = n.argv ? ` -- ${shellQuote(n.argv)}` : "";
      return `start a new one: muster spawn --agent ${n.agent}${cwd} "…"${argv}`;
    }
    case "give_argv":
      return `give its argv after --, e.g. muster spawn --agent ${n.agent ?? "command"} "task" -- cat {prompt_file}`;
    case "wait":
      return `wait for it: muster wait ${n.ids.map(shortId).join(" ")}`;
    case "wait_or_remove": {
      const list = n.ids.map(shortId).join(" ");
      return `wait for it (muster wait ${list}), or cancel and remove it: muster rm --force ${list}`;
    }
    case "cancel":
      return "close one with muster cancel <id> (muster ls lists them)";
    case "status":
      return `muster status ${shortId(n.id)} lists its turns`;
    case "list":
      return "muster ls lists this workspace's children";
    case "agents":
      return "muster agents lists them";
    case "primaries":
      return n.name ? "pass --primary <id> (see muster ls --all)" : "muster ls --all lists every primary";
    case "reach": {
      const short = shortId(n.primary);
      return `reach it with --primary ${short}, e.g. muster status ${n.ref} --primary ${short}`;
    }
    case "reuse_group":
      return "join a group that is not sealed yet, or spawn without --group";
    case "workflow_runs":
      return "muster workflow runs lists them";
    default:
      return unknownStep(n);
  }
}

/** The one-line CLI text of an error: its message and, when it has one, the next step in CLI words. */
export function cliErrorText(e: unknown): string {
  if (!isMusterError(e)) return (e as Error)?.message ?? String(e);
  return e.next ? `${e.message}; ${cliNextStep(e.next)}` : e.message;
}

// Exhaustive: a new action without a case here fails `tsc`.
function unknownStep(n: never): string {
  return `(next step ${JSON.stringify(n)})`;
}
