import { existsSync } from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

/** The installed package's root: the nearest folder up from this file with a package.json (works bundled too). */
function findRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, "package.json"))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error("muster: cannot find its package.json");
    dir = up;
  }
  return dir;
}

export const PACKAGE_ROOT = findRoot();
