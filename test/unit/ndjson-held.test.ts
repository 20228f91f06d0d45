import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_HELD_FILES, type MalformedLine, NdjsonReader } from "../../src/artifacts/reader.js";

const dirs: string[] = [];
const tmpDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-ndjson-held-"));
  dirs.push(d);
  return d;
};
const readers: NdjsonReader[] = [];
afterEach(() => {
  for (const r of readers.splice(0)) r.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** This process's descriptors open on files under `dir` (a deleted file's link ends in " (deleted)"). */
function openUnder(dir: string): number {
  let n = 0;
  for (const fd of fs.readdirSync("/proc/self/fd"))
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dir}/`)) n++;
    } catch {
      // closed while listed (the listing's own descriptor)
    }
  return n;
}

const held = (file: string, onMalformed?: (m: MalformedLine) => void) => {
  const r = new NdjsonReader(file, onMalformed).hold();
  readers.push(r);
  return r;
};

describe("a held NdjsonReader", () => {
  it("keeps one descriptor open across reads, reads every append, and close releases it", () => {
    const dir = tmpDir();
    const f = path.join(dir, "events.ndjson");
    fs.writeFileSync(f, '{"a":1}\n');
    const r = held(f);
    expect(r.readNew()).toEqual([{ a: 1 }]);
    expect(openUnder(dir)).toBe(1);
    fs.appendFileSync(f, '{"a":2}\n{"a":');
    expect(r.readNew()).toEqual([{ a: 2 }]);
    fs.appendFileSync(f, "3}\n");
    expect(r.readNew()).toEqual([{ a: 3 }]);
    expect(r.readNew()).toEqual([]);
    expect(openUnder(dir)).toBe(1);
    r.close();
    expect(openUnder(dir)).toBe(0);
  });

  it("reads a record longer than its buffer whole", () => {
    const f = path.join(tmpDir(), "events.ndjson");
    fs.writeFileSync(f, '{"a":0}\n');
    const r = held(f);
    r.readNew();
    const big = { text: "x".repeat(100_000) };
    fs.appendFileSync(f, `${JSON.stringify(big)}\n{"a":1}\n`);
    expect(r.readNew()).toEqual([big, { a: 1 }]);
  });

  it("a file truncated in place is seen on the next read, and said", () => {
    const f = path.join(tmpDir(), "events.ndjson");
    fs.writeFileSync(f, '{"a":1}\n{"a":2}\n');
    const malformed: MalformedLine[] = [];
    const r = held(f, (m) => malformed.push(m));
    r.readNew();
    fs.truncateSync(f, 0);
    fs.appendFileSync(f, '{"b":1}\n');
    expect(r.readNew()).toEqual([{ b: 1 }]);
    expect(malformed[0]!.reason).toMatch(/file shrank to 8 bytes/);
  });

  it("a recheck lets go of a file replaced under its name and reads the new one", () => {
    const dir = tmpDir();
    const f = path.join(dir, "events.ndjson");
    fs.writeFileSync(f, '{"a":1}\n{"a":2}\n');
    const r = held(f, () => {});
    r.readNew();
    fs.writeFileSync(`${f}.new`, '{"b":1}\n');
    fs.renameSync(`${f}.new`, f);
    expect(r.readNew({ recheck: true })).toEqual([{ b: 1 }]);
    // Only the new file is open: the replaced one was closed.
    expect(openUnder(dir)).toBe(1);
  });

  it("a recheck refuses a name that became a symlink, and holds nothing", () => {
    const dir = tmpDir();
    const f = path.join(dir, "events.ndjson");
    fs.writeFileSync(f, '{"a":1}\n');
    fs.writeFileSync(path.join(dir, "other"), '{"a":1}\n{"secret":1}\n');
    const r = held(f);
    r.readNew();
    fs.rmSync(f);
    fs.symlinkSync(path.join(dir, "other"), f);
    expect(() => r.readNew({ recheck: true })).toThrow(/symbolic link/);
    expect(openUnder(dir)).toBe(0);
  });

  it("a recheck closes a file that is gone", () => {
    const dir = tmpDir();
    const f = path.join(dir, "events.ndjson");
    fs.writeFileSync(f, '{"a":1}\n');
    const r = held(f);
    r.readNew();
    fs.rmSync(f);
    expect(r.readNew({ recheck: true })).toEqual([]);
    expect(openUnder(dir)).toBe(0);
  });

  it(`holds at most ${MAX_HELD_FILES} files in a process; the others read per call`, () => {
    const dir = tmpDir();
    const rs = Array.from({ length: MAX_HELD_FILES + 20 }, (_, i) => {
      const f = path.join(dir, `${i}.ndjson`);
      fs.writeFileSync(f, `{"i":${i}}\n`);
      return held(f);
    });
    expect(rs.map((r) => r.readNew())).toEqual(rs.map((_, i) => [{ i }]));
    expect(openUnder(dir)).toBe(MAX_HELD_FILES);
    for (const r of rs) r.close();
    expect(openUnder(dir)).toBe(0);
  });
});
