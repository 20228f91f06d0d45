/**
 * The hook command muster gives an agent CLI running as a TUI (`mode: tui`): `node hook.js <file> <event>`.
 * It appends one line `{"event", "payload"}` (the hook's JSON stdin, as the CLI sent it) to `<file>` in the
 * child's runner folder, with fsync, and exits 0 whatever happens: a hook that failed must never block the
 * agent (the host notices a missing record by its timeout instead). Imports nothing heavy: it runs per hook.
 */
import { appendHookLine } from "./hook-line.js";

async function main(): Promise<void> {
  const [file, event] = process.argv.slice(2);
  if (!file || !event) return;
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8").trim();
  let payload: unknown = null;
  try {
    payload = text ? JSON.parse(text) : null;
  } catch {
    payload = { unparsed: text.slice(0, 4096) };
  }
  appendHookLine(file, event, payload);
}

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
