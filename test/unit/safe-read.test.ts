import { isUtf8 } from "node:buffer";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { treeUsage } from "../../src/artifacts/budget.js";
import { EventLog } from "../../src/artifacts/log.js";
import { type MalformedLine, NdjsonReader } from "../../src/artifacts/reader.js";
import { readSnapshot, sha256Hex } from "../../src/artifacts/snapshot.js";
import { isMusterError } from "../../src/base/errors.js";
import { invalidUtf8At } from "../../src/cli/prompt.js";
import { appendJsonLines } from "../../src/util/fsx.js";
import { readFileBounded, readJsonBounded, readJsonBoundedIfExists } from "../../src/util/safe-read.js";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-saferead-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const mkfifo = (file: string) => {
  const r = spawnSync("mkfifo", [file]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
};

/** The MusterError thrown by fn (fails the test if fn does not throw one). */
function refusal(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (isMusterError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("readFileBounded", () => {
  it("reads a regular file whole, up to the cap", () => {
    const f = path.join(tmp(), "a.json");
    fs.writeFileSync(f, "0123456789");
    expect(readFileBounded(f, 10).toString()).toBe("0123456789");
  });

  it("refuses a symlink (even to a regular file), naming the file", () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, "real"), "x");
    fs.symlinkSync(path.join(d, "real"), path.join(d, "link"));
    fs.symlinkSync("/dev/zero", path.join(d, "zero"));
    for (const name of ["link", "zero"]) {
      const r = refusal(() => readFileBounded(path.join(d, name), 1024));
      expect(r.code).toBe("integrity");
      expect(r.message).toBe(`refusing to read ${path.join(d, name)}: it is a symbolic link`);
    }
  });

  it("refuses a FIFO without waiting for a writer", () => {
    const f = path.join(tmp(), "fifo");
    mkfifo(f);
    expect(refusal(() => readFileBounded(f, 1024)).message).toMatch(/: it is a FIFO$/);
  });

  it("refuses a device and a directory", () => {
    expect(refusal(() => readFileBounded("/dev/zero", 1024)).message).toMatch(/a character device$/);
    expect(refusal(() => readFileBounded(tmp(), 1024)).message).toMatch(/a directory$/);
  });

  it("refuses a file above the cap before reading it", () => {
    const f = path.join(tmp(), "big");
    fs.writeFileSync(f, "x".repeat(11));
    expect(refusal(() => readFileBounded(f, 10)).message).toContain("11 bytes, more than the 10-byte limit");
  });

  it("a missing file stays ENOENT; IfExists reads it as undefined", () => {
    const f = path.join(tmp(), "nope.json");
    expect(() => readFileBounded(f, 10)).toThrow(expect.objectContaining({ code: "ENOENT" }));
    expect(readJsonBoundedIfExists(f, 10)).toBeUndefined();
  });

  it("invalid JSON names the file", () => {
    const f = path.join(tmp(), "bad.json");
    fs.writeFileSync(f, "{nope");
    expect(refusal(() => readJsonBounded(f, 100)).message).toContain(`${f} is not valid JSON`);
  });
});

describe("readSnapshot", () => {
  const ID = "0190a0b0-0000-7000-8000-000000000001";
  it("refuses a snapshot larger than its recorded size, and a path that is not outputs/<eventId>.md", () => {
    const d = tmp();
    fs.mkdirSync(path.join(d, "outputs"));
    fs.writeFileSync(path.join(d, "outputs", `${ID}.md`), "hello!");
    const ref = { path: `outputs/${ID}.md`, bytes: 6, sha256: sha256Hex("hello!") };
    expect(readSnapshot(d, ref)).toEqual({ text: "hello!", intact: true });
    expect(refusal(() => readSnapshot(d, { ...ref, bytes: 5 })).message).toContain(
      "more than the 5-byte limit",
    );
    expect(refusal(() => readSnapshot(d, { ...ref, path: "../../etc/passwd" })).code).toBe("integrity");
  });
});

describe("NdjsonReader on hostile files", () => {
  it("refuses a symlink to /dev/zero and a FIFO at once", () => {
    const d = tmp();
    fs.symlinkSync("/dev/zero", path.join(d, "zero.ndjson"));
    mkfifo(path.join(d, "fifo.ndjson"));
    expect(refusal(() => new NdjsonReader(path.join(d, "zero.ndjson")).readNew()).message).toContain(
      "symbolic link",
    );
    expect(refusal(() => new NdjsonReader(path.join(d, "fifo.ndjson")).readNew()).message).toContain("FIFO");
  });

  it("reports an oversized line once, with its offset and whole length, and keeps the records around it", () => {
    const f = path.join(tmp(), "events.ndjson");
    const junk = "j".repeat(10_000);
    fs.writeFileSync(f, `{"a":1}\n${junk}\n{"a":2}\nnot json\n`);
    const bad: MalformedLine[] = [];
    expect(new NdjsonReader(f, (m) => bad.push(m), 0, 1000).readNew()).toEqual([{ a: 1 }, { a: 2 }]);
    expect(bad).toEqual([
      { offset: 8, length: 10_000, reason: "record exceeds 1000 bytes" },
      { offset: 8 + 10_001 + 8, length: 8, reason: "invalid JSON" },
    ]);
  });
});

describe("appending after junk", () => {
  it("EventLog starts each record on a fresh line even when junk arrives between two appends", () => {
    const f = path.join(tmp(), "events.ndjson");
    const log = EventLog.open(f);
    log.append({ type: "progress", text: "one" });
    fs.appendFileSync(f, "JUNK-without-newline");
    log.append({ type: "progress", text: "two" });
    log.close();
    const bad: MalformedLine[] = [];
    const all = new NdjsonReader<{ text: string }>(f, (m) => bad.push(m)).readNew();
    expect(all.map((r) => r.text)).toEqual(["one", "two"]);
    expect(bad).toEqual([
      { offset: fs.readFileSync(f, "utf8").indexOf("JUNK"), length: 20, reason: "invalid JSON" },
    ]);
  });

  it("appendJsonLines refuses a symlink and a FIFO instead of writing through them", () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, "target"), "");
    fs.symlinkSync(path.join(d, "target"), path.join(d, "link.jsonl"));
    mkfifo(path.join(d, "fifo.jsonl"));
    expect(() => appendJsonLines(path.join(d, "link.jsonl"), [{ a: 1 }])).toThrow(/ELOOP/);
    expect(() => appendJsonLines(path.join(d, "fifo.jsonl"), [{ a: 1 }])).toThrow(/not a regular file/);
    expect(fs.readFileSync(path.join(d, "target"), "utf8")).toBe("");
  });
});

describe("treeUsage", () => {
  it("counts every readable child and skips a sibling whose events file is a symlink or a FIFO", () => {
    const primary = tmp();
    const dirOf = (name: string) => {
      const d = path.join(primary, "artifacts", name);
      fs.mkdirSync(d, { recursive: true });
      return path.join(d, "events.ndjson");
    };
    const log = EventLog.open(dirOf("good"));
    log.append({
      type: "usage",
      turnId: "0190a0b0-0000-7000-8000-000000000002",
      usage: { input: 3, output: 4 },
    });
    log.close();
    fs.symlinkSync("/dev/zero", dirOf("zero"));
    mkfifo(dirOf("fifo"));
    expect(treeUsage(primary)).toEqual({ turns: 0, tokens: 7, cost: 0 });
  });
});

describe("invalidUtf8At", () => {
  it("agrees with Node's own UTF-8 check and points at the first bad byte", () => {
    const cases: [number[], number][] = [
      [[0x61, 0x62], -1],
      [[0xc3, 0xa9], -1], // é
      [[0xf0, 0x9f, 0x98, 0x80], -1], // U+1F600
      [[0xef, 0xbf, 0xbd], -1], // U+FFFD itself is valid
      [[0x61, 0x80], 1], // lone continuation byte
      [[0xc0, 0xaf], 0], // overlong
      [[0xe0, 0x80, 0xaf], 0], // overlong
      [[0xed, 0xa0, 0x80], 0], // UTF-16 surrogate
      [[0xf4, 0x90, 0x80, 0x80], 0], // above U+10FFFF
      [[0x61, 0xe2, 0x82], 1], // truncated at the end
      [[0xff], 0],
    ];
    for (const [bytes, at] of cases) {
      const b = Uint8Array.from(bytes);
      expect(invalidUtf8At(b), bytes.join(",")).toBe(at);
      expect(isUtf8(b)).toBe(at === -1);
    }
  });
});
