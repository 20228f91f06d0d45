import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-two");

/** The inodes a process's inotify instances watch (/proc/<pid>/fdinfo: "inotify wd:… ino:<hex> …"). */
function watchedInodes(pid: number): number[] {
  const out: number[] = [];
  for (const fd of fs.readdirSync(`/proc/${pid}/fdinfo`)) {
    try {
      for (const m of fs
        .readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8")
        .matchAll(/^inotify wd:\S+ ino:([0-9a-f]+)/gm))
        out.push(Number.parseInt(m[1]!, 16));
    } catch {}
  }
  return out;
}

describe("two parent processes on the same primary", () => {
  it("concurrent registry updates from two processes: none lost, file never corrupt", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-reg-"));
    const file = path.join(dir, "registry.json");
    const writer = path.join(REPO, "test", "fixtures", "registry-writer.mjs");
    let torn = 0;
    const reader = setInterval(() => {
      try {
        if (fs.existsSync(file)) JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        torn += 1;
      }
    }, 2);
    await Promise.all(["a", "b"].map((tag) => execa(process.execPath, [writer, file, tag, "60"])));
    clearInterval(reader);
    const doc = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(Object.keys(doc.children)).toHaveLength(120);
    expect(torn).toBe(0);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("two CLIs spawning and waiting at once: every child is registered and settles", async () => {
    const runs = await Promise.all(
      ["first", "second", "third", "fourth"].map((name) =>
        sb.json(["spawn", "--wait", `${name}\nmock: sleep=0.5`]),
      ),
    );
    for (const r of runs) expect(r.exitCode).toBe(0);
    const ls = await sb.json(["ls"]);
    expect(ls.data.children.map((c: { id: string }) => c.id).sort()).toEqual(
      runs.map((r) => r.data.spawned.id).sort(),
    );
    expect(ls.data.children.every((c: { lastOutcome: string }) => c.lastOutcome === "completed")).toBe(true);
  });

  it("a parent killed while it waits loses nothing: a new one finds the completion", async () => {
    // The turn ends only when the gate opens, after the first waiter is gone.
    const gate = path.join(sb.cwd, "gate-killed-waiter");
    const s = (await sb.json(["spawn", `mock: gate=${encodeURIComponent(gate)}`])).data;
    const waiter = execa(process.execPath, [path.join(REPO, "bin", "muster.js"), "wait", s.id], {
      cwd: sb.cwd,
      env: sb.env,
      reject: false,
    });
    // Killed only once it waits: its watch is on the child's events file (a kill before that proves nothing).
    const events = fs.statSync(path.join(s.artifactDir, "events.ndjson")).ino;
    await until(() => waiter.pid !== undefined && watchedInodes(waiter.pid).includes(events), 30_000);
    waiter.kill("SIGKILL");
    await waiter;
    expect(readEvents(s.artifactDir).some((e) => e.type === "completion")).toBe(false);
    fs.writeFileSync(gate, "go");
    const again = await sb.json(["wait", s.id, "--timeout", "20s"]);
    expect(again.exitCode).toBe(0);
    expect(again.data.results[0].status).toBe("completed");
  });
});
