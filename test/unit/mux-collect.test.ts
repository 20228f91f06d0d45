import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { MusterError } from "../../src/base/errors.js";
import { collectRun } from "../../src/mux/collect.js";

const failed = {
  start: (e: NodeJS.ErrnoException) => new MusterError("mux_unavailable", `cannot run: ${e.message}`),
  timeout: () => new MusterError("mux_unavailable", "timed out"),
};

// Each script forks a sleeper that inherits stdout and prints its pid first, so the test can end it.
const forkers: number[] = [];
afterEach(() => {
  for (const pid of forkers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
});

function run(script: string, timeoutMs: number) {
  const child = spawn("sh", ["-c", script], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.once("data", (b: Buffer) => forkers.push(Number(b.toString().split("\n")[0])));
  return collectRun(child, timeoutMs, failed);
}

describe("collectRun never waits on a pipe a forked process keeps open", () => {
  it("a call that exits while its fork holds stdout resolves with what it printed", async () => {
    const r = await run("sleep 600 & echo $!; echo done; exit 3", 60_000);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("done");
  });

  it("a call that hangs with its fork holding stdout is ended by its timeout", async () => {
    await expect(run("sleep 600 & echo $!; sleep 600", 500)).rejects.toThrow("timed out");
  });

  it("a plain call still resolves with its whole output and exit code", async () => {
    const child = spawn("sh", ["-c", "echo out; echo err >&2; exit 0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const r = await collectRun(child, 60_000, failed);
    expect(r).toEqual({ stdout: "out\n", stderr: "err\n", exitCode: 0 });
  });
});
