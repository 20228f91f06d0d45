import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runGit } from "../../src/isolation/git.js";

// A `git` on PATH that forks a sleeper holding its stdout and then hangs: the shape of a hook that never ends.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-git-"));
const pidFile = path.join(dir, "fork.pid");
fs.writeFileSync(path.join(dir, "git"), `#!/bin/sh\nsleep 600 &\necho $! > ${pidFile}\nsleep 600\n`, {
  mode: 0o755,
});
afterAll(() => {
  try {
    process.kill(Number(fs.readFileSync(pidFile, "utf8")), "SIGKILL");
  } catch {}
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a git call that hangs", () => {
  it("is ended by its timeout with one clear error, though a process it forked holds the pipe", () => {
    const oldPath = process.env.PATH;
    process.env.PATH = `${dir}:${oldPath}`;
    try {
      expect(() => runGit(dir, ["status"], { timeoutMs: 500 })).toThrow(
        /git status in .* timed out after 0.5 s/,
      );
    } finally {
      process.env.PATH = oldPath;
    }
  });
});
