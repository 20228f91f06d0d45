/**
 * A notice sent by a process of its own (send-main.ts), for a caller that may end at once: a parent command
 * that records a child lost (`muster ls`, `wait`) must neither wait for a slow target nor cut its send short.
 * The notice goes on the sender's stdin; the targets it reads itself, from the same config file (no URL in
 * an argv).
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PACKAGE_ROOT } from "../util/pkg.js";
import type { Notice } from "./notice.js";
import { listTargets, wants } from "./targets.js";

const SENDER = path.join(PACKAGE_ROOT, "dist", "notify", "send-main.js");

/**
 * Sends `notice` to every target of `env`'s config that wants it, from a detached process; `logFile` gets a
 * line for each target that did not take it. Returns at once; never throws.
 */
export function sendDetached(notice: Notice, env: NodeJS.ProcessEnv, logFile: string): void {
  try {
    if (!listTargets(env).some((t) => wants(t, notice.event))) return;
    const log = fs.openSync(logFile, "a", 0o600);
    try {
      const sender = spawn(process.execPath, [SENDER], {
        detached: true,
        stdio: ["pipe", "ignore", log],
        env,
      });
      sender.on("error", () => {});
      sender.stdin!.on("error", () => {});
      // A few KiB into an empty pipe: written at once, so the caller may end right after.
      sender.stdin!.end(JSON.stringify(notice));
      sender.unref();
    } finally {
      fs.closeSync(log);
    }
  } catch {
    // A config or log that cannot be read or written: the child's record stands without its notice.
  }
}
