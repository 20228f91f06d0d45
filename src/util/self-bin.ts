import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { rawSetting } from "../base/settings/resolve.js";
import { ensureDir, writeFileAtomic } from "./fsx.js";
import { PACKAGE_ROOT } from "./pkg.js";

/** This install's CLI entry point (a node script; the package's bin/ holds `muster.js`, not `muster`). */
export const SELF_SCRIPT = path.join(PACKAGE_ROOT, "bin", "muster.js");

const shQuote = (s: string): string => `'${s.replaceAll("'", `'\\''`)}'`;

/** A tiny `muster` for a child's PATH: runs this very install with the node that runs the host. */
export function selfShim(node: string = process.execPath): string {
  return `#!/bin/sh\n# muster for agents in child panes: this install, written by the child host\nexec ${shQuote(node)} ${shQuote(SELF_SCRIPT)} "$@"\n`;
}

/**
 * The folder holding an executable `muster` for this install, under `binRoot` (the state root's bin/, see
 * artifacts/layout.ts), so it works however the package was installed: a clone, npm install, npm install -g.
 * One folder per install and node, by content hash, so two installs sharing a state root never overwrite
 * each other's shim.
 */
export function ensureSelfBinDir(binRoot: string, node: string = process.execPath): string {
  const text = selfShim(node);
  const dir = path.join(binRoot, createHash("sha256").update(text).digest("hex").slice(0, 12));
  const file = path.join(dir, "muster");
  try {
    if (fs.readFileSync(file, "utf8") === text) return dir;
  } catch {
    // Not there yet: write it.
  }
  ensureDir(dir);
  writeFileAtomic(file, text, 0o700);
  return dir;
}

/** Whether `file` runs this install: the script itself (through any symlink, e.g. npm link) or our shim. */
function runsThisInstall(file: string): boolean {
  try {
    if (fs.realpathSync(file) === fs.realpathSync(SELF_SCRIPT)) return true;
    const fd = fs.openSync(file, "r");
    try {
      const head = Buffer.alloc(4096);
      const n = fs.readSync(fd, head, 0, head.length, 0);
      return head.subarray(0, n).toString("utf8").includes(shQuote(SELF_SCRIPT));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * How a user can run this install from a shell: `muster` when the first `muster` on their PATH is this one,
 * else `npx muster` (a fresh clone after `npm install`: npx finds the project's own bin). Run through npx,
 * npm puts its own folders first on PATH (`…/_npx/…/.bin`, `node_modules/.bin`): those are not the user's
 * shell, so they are skipped, and a run started by npx answers `npx muster`. Inside a child's pane (our shim
 * first on PATH) the PATH is the agent's own.
 */
export function selfCommand(env: NodeJS.ProcessEnv = process.env): string {
  const inChild = rawSetting(env, "childId") !== undefined;
  if (!inChild && (env.npm_lifecycle_event === "npx" || env.npm_command === "exec")) return "npx muster";
  const npmAdded = (dir: string): boolean =>
    !inChild &&
    !!env.npm_lifecycle_event &&
    (dir.includes(`${path.sep}_npx${path.sep}`) || dir.endsWith(path.join("node_modules", ".bin")));
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir || npmAdded(dir)) continue;
    const file = path.join(dir, "muster");
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (!fs.statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    return runsThisInstall(file) ? "muster" : "npx muster";
  }
  return "npx muster";
}
