import { MusterError } from "../../base/errors.js";
import { nodePty } from "../../util/node-pty.js";
import { TUI_RUNNERS, tuiAdapter } from "./registry.js";

/** `mode: tui` needs a runner whose CLI muster can run as a TUI: any other is refused before anything is made. */
export function checkTuiRunner(runner: string, agent: string): void {
  if (!tuiAdapter(runner))
    throw new MusterError(
      "invalid_argument",
      `agent "${agent}" runs "${runner}", which has no TUI mode (mode: tui works with ${TUI_RUNNERS().join(", ")})`,
    );
  // The TUI runs under a pseudo-terminal of the child host's: without node-pty, refused before anything is made.
  const pty = nodePty();
  if ("problem" in pty) throw new MusterError("unsupported", `mode tui needs node-pty: ${pty.problem}`);
}
