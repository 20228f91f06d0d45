/**
 * Where a place's keeper (place-keeper-main.ts) listens: `<state root>/places/<hash of the place>.sock`,
 * a folder only this user can enter. A unix socket's path is limited to ~107 bytes; a state root too deep
 * for that gets the socket in a private folder of the temp dir instead, named by the root and the place.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const MAX_SOCKET_PATH = 100;

const hash16 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex").slice(0, 16);

/** The socket of `place`'s keeper for the state root `root`; its folder is made (0700) if missing. */
export function placeSocket(root: string, place: string): string {
  let dir = path.join(root, "places");
  let file = path.join(dir, `${hash16(place)}.sock`);
  if (file.length > MAX_SOCKET_PATH) {
    dir = path.join(os.tmpdir(), `muster-${os.userInfo().uid}-places`);
    file = path.join(dir, `${hash16(`${root}\0${place}`)}.sock`);
  }
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return file;
}

/** The keeper's log, beside its socket. */
export const placeLog = (socket: string): string => socket.replace(/\.sock$/, ".log");
