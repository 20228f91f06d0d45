/**
 * The page's own files, a fixed table: a URL path picks an entry, never a file name, so nothing outside these
 * files can be served and there is no listing. They ship with the package in web/.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../util/pkg.js";

export interface Asset {
  type: string;
  body: Buffer;
}

const TABLE: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
};

/** The assets, read once at start (a missing one is a broken install: say so then, not on a request). */
export function loadAssets(dir = path.join(PACKAGE_ROOT, "web")): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const [url, a] of Object.entries(TABLE))
    out.set(url, { type: a.type, body: fs.readFileSync(path.join(dir, a.file)) });
  return out;
}
