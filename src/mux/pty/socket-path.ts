/** Where a pty pane's Unix socket goes: in its folder when the path fits sun_path, else a private runtime folder. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";

/** sun_path holds 108 bytes with its NUL; a longer socket path goes to the runtime dir. */
const SUN_PATH_MAX = 107;

/** `<pane folder>/sock` when it fits sun_path, else `<runtime dir>/muster-pty-<uid>/<id>.sock` (0700). */
export function paneSocketPath(dir: string, id: string, env: NodeJS.ProcessEnv): string {
  const inDir = path.join(dir, "sock");
  if (Buffer.byteLength(inDir) <= SUN_PATH_MAX) return inDir;
  const runtime =
    env.XDG_RUNTIME_DIR && path.isAbsolute(env.XDG_RUNTIME_DIR) ? env.XDG_RUNTIME_DIR : os.tmpdir();
  const folder = path.join(runtime, `muster-pty-${process.getuid?.() ?? "u"}`);
  fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  const st = fs.lstatSync(folder);
  // A folder someone else made (or a link) there would let them at the socket.
  if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid()) || (st.mode & 0o077) !== 0)
    throw new MusterError("mux_unavailable", `pty: ${folder} is not a private folder of this user`);
  const sock = path.join(folder, `${id}.sock`);
  if (Buffer.byteLength(sock) > SUN_PATH_MAX)
    throw new MusterError("mux_unavailable", `pty: socket path too long for this system: ${sock}`);
  return sock;
}
