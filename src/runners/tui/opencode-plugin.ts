/**
 * Muster's plugin for OpenCode's interactive TUI (mode tui; loaded from the per-child config's `plugin` list,
 * OPENCODE_CONFIG_CONTENT): it appends OpenCode's own turn boundaries to the hook file named by
 * MUSTER_TUI_HOOK_FILE, the same line format as hook.ts — chat.message (a prompt was
 * submitted, with its text), tool.execute.before/after, permission.asked, and session.idle (the turn is over:
 * the answer and usage of the run's assistant messages, gathered here from the message events, and the
 * session.error that ended it, if one did). Only the main
 * session counts: a subagent's (task tool) session has a parent and is left out. Checked against 1.18.33.
 * OpenCode loads it in-process (Bun) and calls every export: one export, no imports of muster beyond the line writer, no throws.
 */
import { appendHookLine } from "./hook-line.js";

type Rec = Record<string, unknown>;
const obj = (v: unknown): Rec => (v && typeof v === "object" && !Array.isArray(v) ? (v as Rec) : {});
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

function append(event: string, payload: Rec): void {
  const file = process.env.MUSTER_TUI_HOOK_FILE;
  if (!file) return;
  try {
    appendHookLine(file, event, payload);
  } catch {
    // A hook record that could not be written must never break the agent: the host times out instead.
  }
}

/** One run of the main session: its assistant messages (tokens, aborted) and their text parts, in order. */
interface Run {
  messages: Map<string, { input: number; output: number; cost: number; aborted: boolean }>;
  texts: Map<string, { messageId: string; text: string }>;
  /** Escape (twice) in the TUI: session.error says so before session.idle (the message's error comes after). */
  aborted?: boolean;
  /** Any other session.error (a provider's APIError after OpenCode's own retries): the run failed with it. */
  error?: Rec;
}

export const MusterTuiHooks = async () => {
  const children = new Set<string>();
  const runs = new Map<string, Run>();
  const runOf = (sessionId: string): Run | undefined => runs.get(sessionId);
  const ended = (sessionId: string): void => {
    const run = runOf(sessionId);
    if (!run) return;
    runs.delete(sessionId);
    let answer: string | undefined;
    let interrupted = run.aborted === true;
    const usage = { input: 0, output: 0, cost: 0 };
    for (const [id, m] of run.messages) {
      usage.input += m.input;
      usage.output += m.output;
      usage.cost += m.cost;
      interrupted ||= m.aborted;
      const text = [...run.texts.values()]
        .filter((t) => t.messageId === id)
        .map((t) => t.text)
        .join("");
      if (text.trim()) answer = text;
    }
    append("stop", {
      session_id: sessionId,
      answer,
      usage,
      interrupted,
      ...(run.error ? { error: run.error } : {}),
    });
  };
  return {
    "chat.message": async (input: Rec, output: Rec) => {
      const sessionId = String(input.sessionID ?? "");
      if (!sessionId || children.has(sessionId)) return;
      runs.set(sessionId, { messages: new Map(), texts: new Map() });
      const prompt = (Array.isArray(output.parts) ? output.parts : [])
        .map(obj)
        .filter((p) => p.type === "text" && p.synthetic !== true)
        .map((p) => String(p.text ?? ""))
        .join("\n");
      append("start", { session_id: sessionId, prompt });
    },
    "tool.execute.before": async (input: Rec, output: Rec) => {
      if (!runOf(String(input.sessionID ?? ""))) return;
      append("tool-start", { tool: input.tool, args: output.args });
    },
    "tool.execute.after": async (input: Rec, output: Rec) => {
      if (!runOf(String(input.sessionID ?? ""))) return;
      append("tool-end", { tool: input.tool, error: obj(output.metadata).error !== undefined });
    },
    event: async ({ event }: { event: Rec }) => {
      const p = obj(event.properties);
      const info = obj(p.info);
      if (event.type === "session.created" && info.parentID) children.add(String(info.id));
      else if (event.type === "message.updated" && info.role === "assistant") {
        const run = runOf(String(info.sessionID ?? ""));
        if (!run) return;
        const t = obj(info.tokens);
        const cache = obj(t.cache);
        run.messages.set(String(info.id), {
          input: num(t.input) + num(cache.read) + num(cache.write),
          output: num(t.output) + num(t.reasoning),
          cost: num(info.cost),
          aborted: obj(info.error).name === "MessageAbortedError",
        });
      } else if (event.type === "message.part.updated") {
        const part = obj(p.part);
        const run = runOf(String(part.sessionID ?? ""));
        if (run && part.type === "text" && part.synthetic !== true)
          run.texts.set(String(part.id), {
            messageId: String(part.messageID),
            text: String(part.text ?? ""),
          });
      } else if (event.type === "permission.asked" || event.type === "permission.updated") {
        const sessionId = String(p.sessionID ?? "");
        if (runOf(sessionId)) append("permission", { session_id: sessionId, tool: p.permission ?? p.type });
      } else if (event.type === "session.error") {
        const run = runOf(String(p.sessionID ?? ""));
        if (run && obj(p.error).name === "MessageAbortedError") run.aborted = true;
        else if (run && p.error) run.error = obj(p.error);
      } else if (event.type === "session.idle") ended(String(p.sessionID ?? ""));
    },
  };
};
