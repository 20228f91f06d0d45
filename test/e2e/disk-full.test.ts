import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "../../src/core/registry.js";
import { writeFileAtomic } from "../../src/util/fsx.js";
import { checkArtifacts, pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";
import { mountSmallDisk, type SmallDisk, tempFilesUnder } from "../helpers/tmpfs.js";

const sb = useSandbox("mt-dfull");
const AGENT = path.join(REPO, "test", "fixtures", "big-output.mjs");
const KB = 1024;

let disk: SmallDisk;
beforeAll(async () => {
  disk = await mountSmallDisk("mt-full");
});
afterAll(async () => {
  await disk?.unmount();
});

describe("a full disk leaves no temp files", () => {
  it("writeFileAtomic whose write fails (not the rename) removes its temp file", () => {
    const dir = path.join(disk.dir, "atomic");
    fs.mkdirSync(dir);
    disk.fill();
    try {
      expect(() => writeFileAtomic(path.join(dir, "big.json"), Buffer.alloc(256 * 1024, 0x61))).toThrow(
        /ENOSPC/,
      );
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      disk.free();
    }
  });

  it("a registry update on a full disk fails and leaves no .registry.json.*.tmp", async () => {
    const dir = path.join(disk.dir, "registry");
    fs.mkdirSync(dir);
    const reg = new Registry(path.join(dir, "registry.json"), "00000000-0000-7000-8000-000000000000");
    disk.fill();
    try {
      await expect(
        reg.update((doc) => {
          doc.children.a = {
            id: "a",
            agent: "mock",
            runner: "mock",
            parent: null,
            createdAt: new Date().toISOString(),
            cwd: "/",
            pane: null,
          };
        }),
      ).rejects.toThrow(/ENOSPC/);
      expect(tempFilesUnder(dir)).toEqual([]);
    } finally {
      disk.free();
    }
  });
});

/** A state root on a fresh small disk of its own; the child's working dir and gates stay on the big one. */
async function childOnSmallDisk(tag: string, size: string) {
  const disk = await mountSmallDisk(`mt-dfull-${tag}`, size);
  const home = path.join(disk.dir, "home");
  const env = { MUSTER_HOME: home };
  const gate = path.join(sb.cwd, `gate-${tag}`);
  const spawn = async (argv: string[]) => {
    const r = await sb.run(["spawn", "--agent", "command", tag, "--", process.execPath, AGENT, ...argv], {
      env,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const id = r.stdout.trim();
    const dir = (await sb.json(["status", id], { env })).data.artifactDir as string;
    // spawn returns once the pane exists; on a loaded machine the host may not have logged its start yet.
    const started = await until(() => readEvents(dir).find((e) => e.type === "child_started"), 30_000, 50);
    return { id, dir, hostPid: started.pid as number };
  };
  // Read from the events, not through `wait`: a parent's receipt is a write too, and the disk is full.
  const completion = (dir: string) =>
    until(() => readEvents(dir).find((e) => e.type === "completion"), 60_000, 100);
  return { disk, home, env, gate, spawn, completion };
}

describe("a full disk during a turn", () => {
  it("output that fills the disk: errored 'no space left on device', one line in the pane, the host lives on", async () => {
    const c = await childOnSmallDisk("a", "2m");
    try {
      // 8 MB into a 2 MB disk; the gate never opens: the host stops the runner itself.
      const child = await c.spawn([String(8 * 1024 * KB), c.gate]);
      const done = await c.completion(child.dir);
      expect(done).toMatchObject({
        status: "errored",
        by: "child",
        outputError: { code: "output_unreadable" },
      });
      expect(done.reason).toMatch(/output\.md.*no space left on device/);
      const cap = await sb.run(["capture", child.id], { env: c.env });
      expect(cap.stdout).toMatch(/errored.*no space left on device/);
      expect(cap.stdout).not.toMatch(/^\s+at /m);
      expect(cap.stdout.split("\n").filter((l) => l.includes("no space left on device"))).toHaveLength(1);
      expect(pidAlive(child.hostPid)).toBe(true);
      expect(checkArtifacts(c.home)).toEqual([]);
      expect((await sb.run(["cancel", child.id], { env: c.env })).exitCode).toBe(0);
    } finally {
      await c.disk.unmount();
    }
  });

  it("a conversation line that cannot be written fails the turn; no partial line is left", async () => {
    const c = await childOnSmallDisk("b", "3m");
    try {
      const child = await c.spawn([String(400 * KB), c.gate, "text", "gate-first"]);
      await until(() => fs.existsSync(`${c.gate}.waiting`), 30_000, 50);
      const session = path.join(child.dir, "..", "..", "subagents", `${child.id}.jsonl`);
      const before = fs.readFileSync(session, "utf8");
      // Room for output.md and the snapshot (400 KB each), not for the 400 KB conversation line as well.
      c.disk.fill(850 * KB);
      fs.writeFileSync(c.gate, "");
      const done = await c.completion(child.dir);
      c.disk.free();
      expect(done).toMatchObject({ status: "errored", by: "child", output: { bytes: 400 * KB } });
      expect(done.reason).toMatch(/the conversation could not be written: .*no space left on device/);
      // The file is as it was before the failed append: every line whole, the last one the turn's prompt.
      expect(fs.readFileSync(session, "utf8")).toBe(before);
      const last = JSON.parse(before.trimEnd().split("\n").at(-1)!);
      expect(last).toMatchObject({ role: "user", metadata: { turnId: done.turnId } });
      expect(checkArtifacts(c.home)).toEqual([]);
      expect((await sb.run(["cancel", child.id], { env: c.env })).exitCode).toBe(0);
    } finally {
      await c.disk.unmount();
    }
  });

  it("when not even the completion can be written, the host leaves one line and exits; the parent settles it lost", async () => {
    const c = await childOnSmallDisk("c", "2m");
    try {
      const child = await c.spawn([String(400 * KB), c.gate, "text", "gate-first"]);
      await until(() => fs.existsSync(`${c.gate}.waiting`), 30_000, 50);
      // Pad the event log (progress records, as an agent would send) until its last page has less room
      // than a completion needs: on a full disk that append is the one that fails.
      const events = path.join(child.dir, "events.ndjson");
      const size = () => fs.statSync(events).size;
      const progress = async (text: string) => {
        const before = size();
        const r = await sb.run(["progress", text], { env: { ...c.env, MUSTER_ARTIFACT_DIR: child.dir } });
        expect(r.exitCode, r.stderr).toBe(0);
        await until(() => size() > before, 10_000, 20);
        return size() - before;
      };
      const one = await progress("x");
      const room = 100;
      const k = (((4096 - room - ((size() + one - 1) % 4096)) % 4096) + 4096) % 4096 || 4096;
      await progress("p".repeat(k));
      expect(4096 - (size() % 4096), "room left in the event log's last page").toBeLessThan(300);
      fs.rmSync(path.join(child.dir, ".reserve"));
      c.disk.fill();
      fs.writeFileSync(c.gate, "");
      await until(() => !pidAlive(child.hostPid), 30_000, 50);
      c.disk.free();
      const w = await sb.json(["wait", child.id, "--timeout", "20s"], { env: c.env });
      expect(w.exitCode).toBe(5);
      expect(w.data.results[0]).toMatchObject({ status: "lost" });
      // No torn completion was left behind by the host: the only completion is the parent's.
      const completions = readEvents(child.dir).filter((e) => e.type === "completion");
      expect(completions).toEqual([expect.objectContaining({ by: "parent", status: "lost" })]);
      const cap = (await sb.run(["capture", child.id], { env: c.env })).stdout;
      expect(cap).toMatch(/muster child host stopped: .*no space left on device/);
      expect(cap).not.toMatch(/^\s+at /m);
      expect(checkArtifacts(c.home)).toEqual([]);
    } finally {
      await c.disk.unmount();
    }
  });
});
