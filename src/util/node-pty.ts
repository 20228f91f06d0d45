import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

/**
 * node-pty is an optional dependency: a native addon that npm builds with python3, make and a C++ compiler
 * where it has no prebuilt binary (Linux), and leaves out when that build fails. What needs it (the pty
 * backend, mode tui) asks here first, so a missing build is one clear line, not a module-not-found trace.
 * `from`: the file it is resolved from (tests point it elsewhere).
 */
export function nodePty(from: string = import.meta.url): { version: string } | { problem: string } {
  let root: string;
  try {
    // Resolved as Node resolves it: next to muster, or hoisted into the project that installed muster.
    root = path.dirname(createRequire(from).resolve("node-pty/package.json"));
  } catch {
    return { problem: `node-pty is not installed (an optional dependency: ${BUILD_HINT})` };
  }
  try {
    fs.accessSync(path.join(root, "build", "Release", "pty.node"));
  } catch {
    return { problem: `node-pty is installed but not built (${root}: ${BUILD_HINT})` };
  }
  try {
    const v = (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version?: string })
      .version;
    return { version: v ?? "?" };
  } catch (e) {
    return { problem: `node-pty's package.json is unreadable: ${(e as Error).message}` };
  }
}

const BUILD_HINT =
  "its build needs python3, make and a C++ compiler; install them, then run npm install (or npm rebuild node-pty) again";
