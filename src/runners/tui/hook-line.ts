/**
 * One record of a TUI child's hook file: `{"event", "payload"}` on one line, appended with O_APPEND (concurrent
 * hooks' lines stay whole), by the extensions the agent CLI loads in-process (Pi's extension, OpenCode's
 * plugin), so it imports nothing but node:fs. No fsync: the file only carries the lines to the host on the same
 * machine, which records what counts durably in the events log, and a host started after a crash reads the
 * file from its end (child/tui-hooks.ts); an fsync would hold the agent's own event loop at every hook. hook.ts
 * keeps its own copy of these lines: the host runs a copy of that one script alone, from the child's runner
 * folder (tui-turn.ts says why).
 */
import * as fs from "node:fs";

export function appendHookLine(file: string, event: string, payload: unknown): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify({ event, payload })}\n`);
  } finally {
    fs.closeSync(fd);
  }
}
