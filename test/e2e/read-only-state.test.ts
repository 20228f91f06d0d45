import * as fs from "node:fs";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandbox } from "../helpers/cli.js";

const sb = sandbox("mt-rostate");
let mounted = false;
afterAll(async () => {
  // The sandbox's checks read the artifacts on the mount; removing its folder needs the mount gone first.
  const unmount = async () => {
    if (mounted) await execa("umount", ["-l", sb.home], { reject: false });
  };
  expect(await sb.cleanup({ beforeRemove: unmount })).toEqual([]);
});
const remount = (mode: "ro" | "rw") => execa("mount", ["-o", `remount,${mode}`, sb.home]);

describe("a state root that cannot be written", () => {
  beforeAll(async () => {
    // A tmpfs of its own over the state root (needs root; a refused mount fails the test, never skips it).
    fs.mkdirSync(sb.home, { recursive: true, mode: 0o700 });
    await execa("mount", ["-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", sb.home]);
    mounted = true;
  });

  it("result and wait still give the answer (with a warning); a spawn fails in words, exit 1", async () => {
    const first = await sb.json(["spawn", "--wait", "before the mount turns read-only"]);
    expect(first.exitCode).toBe(0);
    const id = first.data.spawned.id as string;
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    await remount("ro");
    try {
      const result = await sb.run(["result", id]);
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toBe(first.data.results[0].text);
      expect(result.stderr).toMatch(/read-only \(EROFS\); not marked as delivered/);

      const waited = await sb.json(["wait", id]);
      expect(waited.exitCode, waited.stderr).toBe(0);
      expect(waited.data.results[0].text).toBe(first.data.results[0].text);
      expect(waited.data.receiptError).toMatch(/read-only \(EROFS\)/);

      const spawn = await sb.run(["spawn", "on a read-only state root"]);
      expect(spawn.exitCode).toBe(1);
      expect(spawn.stderr.trim().split("\n")).toHaveLength(1);
      expect(spawn.stderr).toMatch(/^muster: cannot (write|use) .*: the file system is read-only \(EROFS\)/);
      const json = await sb.json(["spawn", "on a read-only state root"]);
      expect(json.data.error.code).toBe("storage");
    } finally {
      await remount("rw");
    }
  });
});
