import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cacheFileOf, codeCacheDir, loadCommonJsCached } from "../../src/util/code-cache.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-code-cache-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

let n = 0;
/** A CommonJS bundle of its own, with a cache folder of its own. */
function bundle(source: string) {
  const dir = path.join(base, `b${n++}`);
  fs.mkdirSync(dir);
  const file = path.join(dir, "bundle.cjs");
  fs.writeFileSync(file, source);
  const env = { XDG_CACHE_HOME: path.join(dir, "cache") };
  return { dir, file, env, cacheDir: codeCacheDir(env)! };
}

const SOURCE = [
  'const path = require("node:path");',
  "exports.add = (a, b) => a + b;",
  'exports.joined = () => path.join("a", "b");',
  'exports.provided = () => require("test:value").value;',
  "exports.fail = () => {",
  '  throw new Error("from line 6");',
  "};",
].join("\n");

describe("loadCommonJsCached", () => {
  it("compiles the first time, saves what V8 compiled, and starts from it the next time", async () => {
    const b = bundle(SOURCE);
    const opts = { build: "0123abcd", env: b.env, provided: { "test:value": { value: 7 } } };
    const first = loadCommonJsCached(b.file, opts);
    expect(first.fromCache).toBe(false);
    expect((first.exports.add as (a: number, b: number) => number)(2, 3)).toBe(5);
    expect((first.exports.joined as () => string)()).toBe(path.join("a", "b"));
    expect((first.exports.provided as () => number)()).toBe(7);
    await first.save();
    const cache = cacheFileOf(b.cacheDir, b.file, "0123abcd");
    expect(fs.statSync(cache).size).toBeGreaterThan(0);
    expect(fs.statSync(b.cacheDir).mode & 0o777).toBe(0o700);

    const second = loadCommonJsCached(b.file, opts);
    expect(second.fromCache).toBe(true);
    expect((second.exports.add as (a: number, b: number) => number)(20, 22)).toBe(42);
    const inode = fs.statSync(cache).ino;
    await second.save();
    expect(fs.statSync(cache).ino, "a cache V8 took is not written again").toBe(inode);
  });

  it("keeps the bundle's own line numbers in stack traces", () => {
    const b = bundle(SOURCE);
    const loaded = loadCommonJsCached(b.file, { build: "0123abcd", env: b.env });
    let stack = "";
    try {
      (loaded.exports.fail as () => void)();
    } catch (e) {
      stack = (e as Error).stack ?? "";
    }
    expect(stack).toContain(`${b.file}:6:`);
  });

  it("a cache V8 refuses (another Node, or damaged) is compiled past and written anew", async () => {
    const b = bundle(SOURCE);
    const cache = cacheFileOf(b.cacheDir, b.file, "0123abcd");
    fs.mkdirSync(b.cacheDir, { recursive: true });
    fs.writeFileSync(cache, Buffer.alloc(4096, 7));
    const refused = loadCommonJsCached(b.file, { build: "0123abcd", env: b.env });
    expect(refused.fromCache).toBe(false);
    expect((refused.exports.add as (a: number, b: number) => number)(1, 1)).toBe(2);
    await refused.save();
    expect(loadCommonJsCached(b.file, { build: "0123abcd", env: b.env }).fromCache).toBe(true);
  });

  it("keeps each build's cache apart: V8 checks only the source's length", async () => {
    const b = bundle("exports.v = () => 1;");
    await loadCommonJsCached(b.file, { build: "aaaa1111", env: b.env }).save();
    // Another build of the same length.
    fs.writeFileSync(b.file, "exports.v = () => 2;");
    const other = loadCommonJsCached(b.file, { build: "bbbb2222", env: b.env });
    expect(other.fromCache).toBe(false);
    expect((other.exports.v as () => number)()).toBe(2);
  });

  it("removes other builds' caches once a week old, and keeps newer ones", async () => {
    const b = bundle("exports.v = 1;");
    fs.mkdirSync(b.cacheDir, { recursive: true });
    const old = cacheFileOf(b.cacheDir, b.file, "00000000");
    const recent = cacheFileOf(b.cacheDir, b.file, "11111111");
    const unrelated = path.join(b.cacheDir, "something-else.bin");
    for (const f of [old, recent, unrelated]) fs.writeFileSync(f, "x");
    const eightDaysAgo = new Date(Date.now() - 8 * 24 * 3600_000);
    fs.utimesSync(old, eightDaysAgo, eightDaysAgo);
    fs.utimesSync(unrelated, eightDaysAgo, eightDaysAgo);
    await loadCommonJsCached(b.file, { build: "22222222", env: b.env }).save();
    expect(fs.existsSync(old)).toBe(false);
    expect(fs.existsSync(recent)).toBe(true);
    expect(fs.existsSync(unrelated)).toBe(true);
    expect(fs.existsSync(cacheFileOf(b.cacheDir, b.file, "22222222"))).toBe(true);
  });

  it("writes nothing with MUSTER_CODE_CACHE=0, and a home it cannot write to only costs the cache", async () => {
    const off = bundle(SOURCE);
    const env = { ...off.env, MUSTER_CODE_CACHE: "0" };
    expect(codeCacheDir(env)).toBeUndefined();
    await loadCommonJsCached(off.file, { build: "0123abcd", env }).save();
    expect(fs.existsSync(off.cacheDir)).toBe(false);

    const blocked = bundle(SOURCE);
    // The cache's parent is a file: no folder can be made there.
    fs.writeFileSync(blocked.env.XDG_CACHE_HOME, "not a folder");
    const loaded = loadCommonJsCached(blocked.file, { build: "0123abcd", env: blocked.env });
    await expect(loaded.save()).resolves.toBeUndefined();
    expect((loaded.exports.add as (a: number, b: number) => number)(1, 2)).toBe(3);
  });

  it("loads a lazy module on the first use of one of its exports, not when the bundle names it", () => {
    const b = bundle(
      [
        'const side = require("./side.cjs");',
        "exports.use = () => side.value;",
        'exports.has = () => "value" in side;',
      ].join("\n"),
    );
    const marker = path.join(b.dir, "side-loaded");
    fs.writeFileSync(
      path.join(b.dir, "side.cjs"),
      `require("node:fs").writeFileSync(${JSON.stringify(marker)}, ""); exports.value = 9;`,
    );
    const loaded = loadCommonJsCached(b.file, { build: "0123abcd", env: b.env, lazy: ["./side.cjs"] });
    expect(fs.existsSync(marker)).toBe(false);
    expect((loaded.exports.has as () => boolean)()).toBe(true);
    expect(fs.existsSync(marker)).toBe(true);
    expect((loaded.exports.use as () => number)()).toBe(9);
  });

  it("refuses a build name that is not hex (it names a file)", () => {
    const b = bundle(SOURCE);
    expect(() => loadCommonJsCached(b.file, { build: "../x", env: b.env })).toThrow(/must be hex/);
  });
});
