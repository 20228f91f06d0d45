/**
 * Where a far side serves a child's artifact dir when its state root is another folder than the near side's
 * (relay-hub-main.ts `--map`): the same path under the far root. The far root's folders above the dir are
 * made here (0700), as a local spawn makes them on this machine.
 */
import * as fs from "node:fs";
import * as path from "node:path";

export interface RootMap {
  near: string;
  far: string;
}

/** The far dir of near dir `dir`, or why it cannot be served (outside the near root). */
export function mapRoot(dir: string, map: RootMap | undefined): { dir: string } | { error: string } {
  if (!map) return { dir };
  const rel = path.relative(path.resolve(map.near), path.resolve(dir));
  if (rel === "" || rel.startsWith("..") || path.isAbsolute(rel))
    return { error: `mirror relay hub: ${dir} is not under the mapped root ${map.near}` };
  const far = path.join(path.resolve(map.far), rel);
  try {
    fs.mkdirSync(path.dirname(far), { recursive: true, mode: 0o700 });
  } catch (e) {
    return { error: `mirror relay hub: cannot make ${path.dirname(far)}: ${(e as Error).message}` };
  }
  return { dir: far };
}
