/**
 * The hook command muster gives an agent CLI running as a TUI (`mode: tui`): `node hook.js <file> <event>`.
 * It appends one line `{"event", "payload"}` (the hook's JSON stdin, as the CLI sent it) to `<file>` in the
 * child's runner folder, and exits 0 whatever happens: a hook that failed must never block the agent (the
 * host notices a missing record by its timeout instead). No fsync, as hook-line.ts says why: a CLI waits for
 * its hook before the tool runs. Kept free of imports: it runs per hook, and the host runs a copy of it from
 * the child's runner folder (tui-turn.ts says why).
 */
import * as fs from "node:fs";

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
  // One write of one line: O_APPEND keeps concurrent hooks' lines whole.
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify({ event, payload })}\n`);
  } finally {
    fs.closeSync(fd);
  }
}

main().then(
  () => process.exit(0),
  () => process.exit(0),
);
