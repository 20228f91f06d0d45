/** Before muster talks to a holder's socket: it must be the socket a holder of this user made, not a link. */
import * as fs from "node:fs";
import { MusterError } from "../../base/errors.js";

/**
 * Throws unless `socket` is a Unix socket itself (lstat: a symlink to another listener is refused), owned by
 * this user and closed to others (the holder makes it 0600). A path that is gone passes: connecting then says
 * the pane has exited.
 */
export function checkHolderSocket(socket: string, label: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(socket);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new MusterError(
      "mux_unavailable",
      `pty pane ${label}: cannot check its socket: ${(e as Error).message}`,
    );
  }
  const uid = process.getuid?.();
  const why = st.isSymbolicLink()
    ? "is a symbolic link"
    : !st.isSocket()
      ? "is not a socket"
      : uid !== undefined && st.uid !== uid
        ? `belongs to uid ${st.uid}, not this user`
        : (st.mode & 0o077) !== 0
          ? `is open to other users (mode ${(st.mode & 0o777).toString(8)})`
          : undefined;
  if (why)
    throw new MusterError(
      "mux_unavailable",
      `pty pane ${label}: its socket ${socket} ${why}, so it is not one muster's holder made; refused`,
    );
}

/** The INFO frame's holder pid must be the one muster started for the pane (when it knows it). */
export function checkHolderPid(info: { pid?: unknown }, expected: number | undefined, label: string): void {
  if (expected === undefined || info.pid === expected) return;
  throw new MusterError(
    "mux_unavailable",
    `pty pane ${label}: the process behind its socket (pid ${String(info.pid)}) is not its holder (pid ${expected}); refused`,
  );
}
