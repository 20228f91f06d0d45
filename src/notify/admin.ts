/** What `muster notify` does: the targets kept in the user's config, and a test notice sent to them. */
import { MusterError } from "../base/errors.js";
import { sendNotice } from "./send.js";
import { listTargets, type NotifyTarget } from "./targets.js";

export {
  addTarget,
  listTargets,
  NOTIFY_EVENTS,
  NOTIFY_KINDS,
  type NotifyTarget,
  newTarget,
  parseEvents,
  removeTarget,
} from "./targets.js";

export interface TestResult {
  id: string;
  kind: NotifyTarget["kind"];
  ok: boolean;
  error?: string;
}

/** Sends a test notice to every target (or the one named), once each, and says how each went. */
export async function testTargets(env: NodeJS.ProcessEnv, id?: string): Promise<TestResult[]> {
  const all = listTargets(env);
  const chosen = id === undefined ? all : all.filter((t) => t.id === id);
  if (id !== undefined && chosen.length === 0)
    throw new MusterError("not_found", `no notification target ${id} (muster notify ls lists them)`);
  const notice = {
    event: "finished" as const,
    title: "muster: a test notification",
    text: "muster notify test: if you read this, notifications reach you.",
    child: "00000000-0000-7000-8000-000000000000",
    agent: "test",
    eventId: "00000000-0000-7000-8000-000000000000",
    ts: new Date().toISOString(),
  };
  return Promise.all(
    chosen.map(async (t) => {
      const r = await sendNotice(t, notice, { attempts: 1 });
      return { id: t.id, kind: t.kind, ok: r.ok, ...(r.ok ? {} : { error: r.error }) };
    }),
  );
}
