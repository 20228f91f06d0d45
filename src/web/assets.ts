/**
 * The page's own files, a fixed table: a URL path picks an entry, never a file name, so nothing outside these
 * files can be served and there is no listing. They ship with the package in web/, and the terminal's
 * (xterm.js and its fit add-on) come from their packages as installed beside muster.
 */
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../util/pkg.js";

export interface Asset {
  type: string;
  body: Buffer;
}

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

const OWN: Record<string, { file: string; type: string }> = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/app.js": { file: "app.js", type: JS },
  "/markdown.js": { file: "markdown.js", type: JS },
  "/app.css": { file: "app.css", type: CSS },
};

// A package's file, as Node resolves the package from here (next to muster, or hoisted above it).
const PACKAGED: Record<string, { pkg: string; file: string; type: string }> = {
  "/xterm.js": { pkg: "@xterm/xterm", file: "lib/xterm.js", type: JS },
  "/xterm.css": { pkg: "@xterm/xterm", file: "css/xterm.css", type: CSS },
  "/addon-fit.js": { pkg: "@xterm/addon-fit", file: "lib/addon-fit.js", type: JS },
};

/** The placeholder in index.html that each page load gets its own style nonce in place of. */
export const NONCE_MARK = "__STYLE_NONCE__";

/** The assets, read once at start (a missing one is a broken install: say so then, not on a request). */
export function loadAssets(dir = path.join(PACKAGE_ROOT, "web")): Map<string, Asset> {
  const out = new Map<string, Asset>();
  for (const [url, a] of Object.entries(OWN))
    out.set(url, { type: a.type, body: fs.readFileSync(path.join(dir, a.file)) });
  const require = createRequire(import.meta.url);
  for (const [url, a] of Object.entries(PACKAGED)) {
    const root = path.dirname(require.resolve(`${a.pkg}/package.json`));
    out.set(url, { type: a.type, body: fs.readFileSync(path.join(root, a.file)) });
  }
  return out;
}
