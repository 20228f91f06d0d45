/**
 * `node dist/notify/send-main.js < notice.json`: sends one notice to every target of the config file (its
 * environment's) that wants it, then exits (detached.ts starts it). A target that did not take it is one
 * line on stderr. Exits 2 on a notice that does not read as one.
 */
import type { Notice } from "./notice.js";
import { sendNotice } from "./send.js";
import { listTargets, NOTIFY_EVENTS, wants } from "./targets.js";

// A notice's text is bounded (notice.ts): anything much larger is not one.
const MAX_INPUT = 64 * 1024;

async function main(): Promise<void> {
  const notice = parse(await readStdin());
  if (!notice) {
    process.stderr.write("notify sender: its stdin does not hold a notice\n");
    process.exit(2);
  }
  const targets = listTargets(process.env).filter((t) => wants(t, notice.event));
  // A send's backoff timer does not hold a process up (send.ts): this one lives until every send ended.
  const hold = setInterval(() => {}, 60_000);
  await Promise.all(
    targets.map(async (t) => {
      const r = await sendNotice(t, notice);
      if (!r.ok)
        process.stderr.write(
          `${new Date().toISOString()} notification of ${notice.event} (child ${notice.child}) to ${t.id} failed after ${r.attempts} tries: ${r.error}\n`,
        );
    }),
  );
  clearInterval(hold);
}

async function readStdin(): Promise<string> {
  let text = "";
  for await (const chunk of process.stdin) {
    text += (chunk as Buffer).toString("utf8");
    if (text.length > MAX_INPUT) return "";
  }
  return text;
}

function parse(raw: string): Notice | undefined {
  try {
    const n = JSON.parse(raw) as Partial<Notice>;
    const strings = [n.title, n.text, n.child, n.agent, n.eventId, n.ts];
    if (!NOTIFY_EVENTS.includes(n.event as Notice["event"]) || strings.some((s) => typeof s !== "string"))
      return undefined;
    return n as Notice;
  } catch {
    return undefined;
  }
}

void main();
