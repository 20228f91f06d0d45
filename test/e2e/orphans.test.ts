import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { pidAlive, processesMentioning, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-orphan");
const onPty = { MUSTER_BACKEND: "pty" };

describe("muster processes whose state root is deleted", () => {
  it("a pty child's holder, host and runner notice their folders are gone and exit", async () => {
    const r = await sb.json(["spawn", "hang here\nmock: hang"], { env: onPty });
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = r.data.artifactDir as string;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 30_000);
    const events = readEvents(dir);
    const host = events.find((e) => e.type === "child_started")!.pid as number;
    const runner = events.find((e) => e.type === "runner_started")!.pid as number;
    const holders = processesMentioning(path.join(sb.home, "backends", "pty")).map((p) => p.pid);
    expect(holders.length).toBeGreaterThan(0);
    // What a test's clean-up did: its MUSTER_HOME removed, nothing stopped first. The live processes may
    // write a file into a folder while it is being removed (ENOTEMPTY): the removal tries again, as rm -rf would.
    fs.rmSync(sb.home, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 });
    await until(() => ![host, runner, ...holders].some(pidAlive), 30_000, 250);
  }, 120_000);

  it("doctor lists a muster process whose state dir no longer exists", async () => {
    // An orphan that does not exit by itself (an older muster's host): its argv is a host's, its folder gone.
    const gone = path.join(path.dirname(sb.home), "gone-root", "artifacts", "x");
    const script = path.join(path.dirname(sb.home), "old", "dist", "child", "host.bundle.js");
    const stray = execa(process.execPath, ["-e", "setTimeout(() => {}, 120000)", script, gone], {
      reject: false,
    });
    try {
      await until(() => processesMentioning(gone).length > 0, 10_000);
      const doc = await sb.json(["doctor"]);
      expect(doc.data.orphans).toContainEqual({ pid: stray.pid, kind: "child host", dir: gone });
      const human = await sb.run(["doctor"]);
      expect(human.stdout).toMatch(
        new RegExp(`^orphan ${stray.pid} +STRAY +child host of ${gone}, which no longer exists`, "m"),
      );
    } finally {
      stray.kill("SIGKILL");
      await stray;
    }
  }, 120_000);
});
