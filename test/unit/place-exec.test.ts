import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { collectRun } from "../../src/place/local/collect.js";
import { execLocal } from "../../src/place/local/exec.js";
import { ExecFailure } from "../../src/place/place.js";

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
  return collectRun(child, timeoutMs);
}

describe("collectRun never waits on a pipe a forked process keeps open", () => {
  it("a call that exits while its fork holds stdout resolves with what it printed", async () => {
    const r = await run("sleep 600 & echo $!; echo done; exit 3", 60_000);
    expect(r.exitCode).toBe(3);
    expect(r.stdout).toContain("done");
  });

  it("output that is waiting in the pipe is kept when the event loop was blocked past the drain after exit", async () => {
    // The fork prints after its parent exited and then lets the pipe go; meanwhile this process is busy (as
    // a burst of spawns writing and syncing files keeps it), so the drain timer is overdue by the time the
    // loop runs again, with the output already in the pipe.
    const child = spawn("sh", ["-c", "(sleep 0.3; echo late) & exit 0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const r = collectRun(child, 60_000);
    child.once("exit", () => {
      const until = Date.now() + 1500;
      while (Date.now() < until) {}
    });
    const got = await r;
    expect(got.exitCode).toBe(0);
    expect(got.stdout).toBe("late\n");
  });

  it("a call that hangs with its fork holding stdout is ended by its timeout", async () => {
    await expect(run("sleep 600 & echo $!; sleep 600", 500)).rejects.toThrow("timed out");
  });

  it("a plain call still resolves with its whole output and exit code", async () => {
    const child = spawn("sh", ["-c", "echo out; echo err >&2; exit 0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const r = await collectRun(child, 60_000);
    expect(r).toEqual({ stdout: "out\n", stderr: "err\n", exitCode: 0 });
  });
});

describe("the local place's exec", () => {
  it("runs argv with exactly the environment given, stdin from input", async () => {
    const r = await execLocal(["sh", "-c", 'printf "%s|%s|" "$ONLY" "$(printenv HOME || echo unset)"; cat'], {
      env: { ONLY: "this", PATH: process.env.PATH },
      input: "in",
      timeoutMs: 60_000,
    });
    expect(r).toEqual({ stdout: "this|unset|in", stderr: "", exitCode: 0 });
  });

  it("a command that is not there is an ExecFailure of kind start with the errno", async () => {
    const e = await execLocal(["/nonexistent/muster-cmd"], { env: {}, timeoutMs: 60_000 }).catch((x) => x);
    expect(e).toBeInstanceOf(ExecFailure);
    expect(e.kind).toBe("start");
    expect(e.errno?.code).toBe("ENOENT");
  });
});
