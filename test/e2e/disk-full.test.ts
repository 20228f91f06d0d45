import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Registry } from "../../src/core/registry.js";
import { writeFileAtomic } from "../../src/util/fsx.js";
import { mountSmallDisk, type SmallDisk, tempFilesUnder } from "../helpers/tmpfs.js";

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
