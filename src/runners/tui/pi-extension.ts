/**
 * Muster's extension for Pi's interactive TUI (`pi -e <this file>`, mode tui): it appends Pi's own turn
 * boundaries to the hook file named by MUSTER_TUI_HOOK_FILE, the same line format as hook.ts — session_start
 * (ready, with the session id), before_agent_start (a prompt was submitted, with its text) and agent_end (the
 * turn is over, with its messages' answer and usage). Pi loads it in-process: no imports of muster, no throws.
 */
import { appendHookLine } from "./hook-line.js";

type Ctx = { sessionManager?: { getSessionId?(): string; getSessionFile?(): string | undefined } };
type Pi = { on(event: string, handler: (event: Record<string, unknown>, ctx: Ctx) => unknown): void };

function append(event: string, payload: Record<string, unknown>): void {
  const file = process.env.MUSTER_TUI_HOOK_FILE;
  if (!file) return;
  try {
    appendHookLine(file, event, payload);
  } catch {
    // A hook record that could not be written must never break the agent: the host times out instead.
  }
}

const session = (ctx: Ctx) => {
  try {
    return {
      session_id: ctx.sessionManager?.getSessionId?.(),
      session_file: ctx.sessionManager?.getSessionFile?.(),
    };
  } catch {
    return {};
  }
};

export default function muster(pi: Pi): void {
  pi.on("session_start", (event, ctx) => append("ready", { ...session(ctx), reason: event.reason }));
  pi.on("before_agent_start", (event, ctx) => append("start", { ...session(ctx), prompt: event.prompt }));
  pi.on("agent_end", (event, ctx) => append("stop", { ...session(ctx), messages: event.messages }));
  pi.on("tool_execution_start", (event) => append("tool-start", { tool: event.toolName, args: event.args }));
  pi.on("tool_execution_end", (event) =>
    append("tool-end", { tool: event.toolName, error: event.isError === true }),
  );
}
