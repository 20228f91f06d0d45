import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-pokes");

/** inotify instances a process holds: its fds that link to anon_inode:inotify. */
function inotifyInstances(pid: number): number {
  let n = 0;
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/fd/${fd}`) === "anon_inode:inotify") n += 1;
    } catch {}
  }
  return n;
}

describe("an idle child host holds no inotify instance", () => {
  it("idle, it has none; a follow-up wakes it by a poke, not by its safety poll", async () => {
    // The safety poll is set far out: the follow-up below can only start because the writer poked the host.
    const env = { MUSTER_HOST_POLL_MS: "600000" };
    const s = await sb.json(["spawn", "--wait", "first"], { env });
    expect(s.exitCode, s.stderr).toBe(0);
    const dir = s.data.results[0].artifactDir as string;
    const pid = readEvents(dir).find((e) => e.type === "child_started")?.pid as number;
    expect(inotifyInstances(pid)).toBe(0);

    const sent = await sb.json(["send", s.data.results[0].id, "second"], { env });
    expect(sent.exitCode, sent.stderr).toBe(0);
    const turnId = sent.data.turnId as string;
    await until(() => readEvents(dir).some((e) => e.type === "turn_started" && e.turnId === turnId), 30_000);
    const w = await sb.json(["wait", s.data.results[0].id, "--timeout", "30s"]);
    expect(w.data.results[0]).toMatchObject({ turnId, status: "completed" });
    expect(inotifyInstances(pid)).toBe(0);
  }, 90_000);
});

describe("doctor and the inotify limit", () => {
  it("reports the per-user limit and the instances in use, this test's own watch among them", async () => {
    const watch = fs.watch(sb.cwd, () => {});
    try {
      expect(inotifyInstances(process.pid)).toBe(1);
      const d = await sb.json(["doctor"]);
      const limit = Number(fs.readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8"));
      expect(d.data.inotify.limit).toBe(limit);
      expect(d.data.inotify.inUse).toBeGreaterThanOrEqual(1);
      expect(d.data.inotify.headroom).toBe(Math.max(0, limit - d.data.inotify.inUse));
      const text = await sb.run(["doctor"]);
      expect(text.stdout).toMatch(/inotify\s+\S+\s+\d+ of \d+ instances in use by this user/);
    } finally {
      watch.close();
    }
  });
});
