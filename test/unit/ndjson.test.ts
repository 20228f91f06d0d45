import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LineSplitter } from "../../src/artifacts/lines.js";
import { EventLog } from "../../src/artifacts/log.js";
import { type MalformedLine, NdjsonReader } from "../../src/artifacts/reader.js";

const dirs: string[] = [];
const tmpFile = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-ndjson-"));
  dirs.push(d);
  return path.join(d, "events.ndjson");
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("NdjsonReader", () => {
  it("reads only new bytes from its cursor and waits for an unterminated tail", () => {
    const f = tmpFile();
    fs.writeFileSync(f, '{"a":1}\n{"a":2}\n{"a":');
    const r = new NdjsonReader(f);
    expect(r.readNew()).toEqual([{ a: 1 }, { a: 2 }]);
    expect(r.cursor).toBe(16);
    expect(r.readNew()).toEqual([]);
    fs.appendFileSync(f, "3}\n");
    expect(r.readNew()).toEqual([{ a: 3 }]);
    expect(r.readNew()).toEqual([]);
  });

  it("splits on LF only: U+2028, U+2029 and CR stay inside a record", () => {
    const f = tmpFile();
    fs.writeFileSync(f, `${JSON.stringify({ t: "a\u2028b\u2029c\rd" })}\n`);
    expect(new NdjsonReader(f).readNew()).toEqual([{ t: "a\u2028b\u2029c\rd" }]);
  });

  it("skips and reports a malformed line without losing the records around it", () => {
    const f = tmpFile();
    fs.writeFileSync(f, '{"a":1}\nnot json\n[1,2]\n{"a":2}\n');
    const bad: MalformedLine[] = [];
    expect(new NdjsonReader(f, (m) => bad.push(m)).readNew()).toEqual([{ a: 1 }, { a: 2 }]);
    expect(bad.map((b) => b.offset)).toEqual([8, 17]);
  });

  it("a torn record followed by more writes costs only the torn record", () => {
    const f = tmpFile();
    const log = EventLog.open(f);
    log.append({ type: "progress", text: "one" });
    log.close();
    fs.appendFileSync(f, '{"v":1,"seq":2,"type":"prog'); // the writer died mid-append
    const reader = new NdjsonReader(f);
    expect(reader.readNew()).toHaveLength(1);
    const again = EventLog.open(f); // a new writer ends the torn line first
    const e = again.append({ type: "progress", text: "two" });
    again.close();
    expect(e.seq).toBe(2);
    const bad: MalformedLine[] = [];
    const all = new NdjsonReader(f, (m) => bad.push(m)).readNew() as { text: string }[];
    expect(all.map((x) => x.text)).toEqual(["one", "two"]);
    expect(bad).toHaveLength(1);
  });

  it("skips an oversized record and reports it", () => {
    const f = tmpFile();
    fs.writeFileSync(f, `${JSON.stringify({ big: "x".repeat(2000) })}\n{"ok":true}\n`);
    const bad: MalformedLine[] = [];
    expect(new NdjsonReader(f, (m) => bad.push(m), 0, 1000).readNew()).toEqual([{ ok: true }]);
    expect(bad[0]!.reason).toMatch(/exceeds/);
  });

  it("a missing file reads as empty", () => {
    expect(new NdjsonReader("/nonexistent/events.ndjson").readNew()).toEqual([]);
  });
});

describe("EventLog", () => {
  it("numbers records strictly and continues after the highest seq on reopen", () => {
    const f = tmpFile();
    const a = EventLog.open(f);
    a.append({ type: "progress", text: "x" });
    a.append({ type: "progress", text: "y" });
    a.close();
    const b = EventLog.open(f);
    const e = b.append({ type: "progress", text: "z" });
    b.close();
    expect(e.seq).toBe(3);
    const lines = fs
      .readFileSync(f, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.seq)).toEqual([1, 2, 3]);
    expect(new Set(lines.map((l) => l.eventId)).size).toBe(3);
    expect(fs.statSync(f).mode & 0o777).toBe(0o600);
  });

  it("refuses a record over 1 MiB", () => {
    const log = EventLog.open(tmpFile());
    expect(() => log.append({ type: "progress", text: "x".repeat(1024 * 1024) })).toThrow(/exceeds 1 MiB/);
    log.close();
  });
});

describe("LineSplitter", () => {
  it("joins lines split across chunks and keeps the tail", () => {
    const s = new LineSplitter(100);
    expect(s.push(Buffer.from("ab")).map(String)).toEqual([]);
    expect(s.push(Buffer.from("c\nde\nf")).map(String)).toEqual(["abc", "de"]);
    expect(String(s.flush())).toBe("f");
  });
  it("drops a line longer than the limit, then carries on", () => {
    const sizes: number[] = [];
    const s = new LineSplitter(4, (n) => sizes.push(n));
    expect(s.push(Buffer.from("123456")).map(String)).toEqual([]);
    expect(s.push(Buffer.from("789\nok\n")).map(String)).toEqual(["ok"]);
    expect(sizes).toEqual([6]);
  });
});
