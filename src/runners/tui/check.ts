import { MusterError } from "../../base/errors.js";
import { TUI_RUNNERS, tuiAdapter } from "./registry.js";

/** `mode: tui` needs a runner whose CLI muster can run as a TUI: any other is refused before anything is made. */
export function checkTuiRunner(runner: string, agent: string): void {
  if (tuiAdapter(runner)) return;
  throw new MusterError(
    "invalid_argument",
    `agent "${agent}" runs "${runner}", which has no TUI mode (mode: tui works with ${TUI_RUNNERS().join(", ")})`,
  );
}
