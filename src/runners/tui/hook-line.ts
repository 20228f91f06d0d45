/**
 * One record of a TUI child's hook file: `{"event", "payload"}` on one line, appended with O_APPEND (concurrent
 * hooks' lines stay whole) and fsync. Written by the hook command (hook.ts) and by in-process extensions (Pi's),
 * so it imports nothing but node:fs: it is loaded inside the agent CLI or once per hook.
 */
import * as fs from "node:fs";

export function appendHookLine(file: string, event: string, payload: unknown): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify({ event, payload })}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
