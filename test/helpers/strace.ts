import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Runs `node <args>` under strace (installed by .ci/run, as tmux and sshd are) and counts the fsync and fdatasync
 * calls it and its threads made. `input` goes to its stdin.
 */
export function fsyncsOfNode(args: string[], input = ""): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-strace-"));
  try {
    const trace = path.join(dir, "trace");
    execFileSync(
      "strace",
      ["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", trace, process.execPath, ...args],
      { input, stdio: ["pipe", "ignore", "inherit"] },
    );
    return fs
      .readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
