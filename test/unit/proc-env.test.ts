import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { hostAliveAsync, readSmallFile, sessionLeadersWithEnv } from "../../src/util/proc.js";
import { useSleepers } from "../helpers/sleepers.js";

const sleeper = useSleepers();

describe("sessionLeadersWithEnv", () => {
  it("finds the session leaders carrying exactly name=value, wherever it sits in their environment", () => {
    const dir = `/tmp/mt-proc-env-${process.pid}/artifacts/a`;
    const first = sleeper({ env: { MUSTER_TEST_DIR: dir }, detached: true });
    const later = sleeper({ env: { A: "1", MUSTER_TEST_DIR: dir, Z: "2" }, detached: true });
    // Not a session leader (the runner of a turn always is), a longer value, another name with the same text.
    sleeper({ env: { MUSTER_TEST_DIR: dir } });
    sleeper({ env: { MUSTER_TEST_DIR: `${dir}2` }, detached: true });
    sleeper({ env: { X_MUSTER_TEST_DIR: dir }, detached: true });
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", dir).sort()).toEqual([first, later].sort());
  });

  it("finds nothing for a value no process carries", () => {
    expect(sessionLeadersWithEnv("MUSTER_TEST_DIR", `/nowhere/${process.pid}`)).toEqual([]);
  });
});

describe("hostAliveAsync", () => {
  it("tells the host of a folder from a live process that is not it, and from a dead one", async () => {
    // A long folder name: the cmdline is read in several small pieces.
    const dir = `/tmp/mt-proc-alive-${process.pid}/${"d".repeat(3000)}`;
    const host = sleeper({ argv0: dir });
    expect(await hostAliveAsync(host, dir)).toBe(true);
    expect(await hostAliveAsync(host, `${dir}-other`)).toBe(false);
    expect(await hostAliveAsync(process.pid, dir)).toBe(false);
    process.kill(host, "SIGKILL");
    for (const end = Date.now() + 5000; (await hostAliveAsync(host, dir)) && Date.now() < end; )
      await new Promise((r) => setTimeout(r, 20));
    expect(await hostAliveAsync(host, dir)).toBe(false);
  });
});

describe("readSmallFile", () => {
  it("reads a /proc file whole (its size reads 0) and a file longer than one piece", async () => {
    expect(await readSmallFile("/proc/self/cmdline")).toBe(fs.readFileSync("/proc/self/cmdline", "utf8"));
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mt-small-read-")), "f");
    const text = `${"é".repeat(1500)}x`;
    fs.writeFileSync(file, text);
    try {
      expect(await readSmallFile(file)).toBe(text);
      await expect(readSmallFile(`${file}-missing`)).rejects.toThrow(/ENOENT/);
    } finally {
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });
});
