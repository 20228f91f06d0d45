import { appendSession, SESSION_VERSION, type SessionManifest } from "./store.js";

/** The fixed child-role instruction every child's conversation starts with. */
export const CHILD_ROLE =
  "You are a subagent started by muster for a parent agent. You share its workspace but not its conversation: " +
  "everything you need is in the task. Work only on that task, do not start unrelated changes, and end your turn " +
  "with the answer your parent should read (it receives your final message as the result).";

export interface SeedInput extends SessionManifest {
  id: string;
  cwd: string;
  createdAt: string;
  systemPrompt: string;
}

/** Writes a new child's header and system messages: primary context, child role, profile (carrying the manifest). */
export function seedSession(file: string, s: SeedInput): void {
  const ts = s.createdAt;
  appendSession(file, [
    {
      type: "session",
      version: SESSION_VERSION,
      id: s.id,
      primary: s.primary,
      parent: s.parent,
      createdAt: ts,
    },
    {
      type: "message",
      role: "system",
      kind: "primary-context",
      text: `primary ${s.primary}; working directory ${s.cwd}`,
      ts,
    },
    { type: "message", role: "system", kind: "child-role", text: CHILD_ROLE, ts },
    {
      type: "message",
      role: "system",
      kind: "profile",
      text: s.systemPrompt,
      ts,
      metadata: { manifest: { primary: s.primary, parent: s.parent, agent: s.agent, runner: s.runner } },
    },
  ]);
}
