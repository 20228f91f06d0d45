import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { linesFromEnd } from "../../src/util/lines-from-end.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function fileWith(text: string | Buffer): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-lines-end-"));
  dirs.push(dir);
  const file = path.join(dir, "log.ndjson");
  fs.writeFileSync(file, text);
  return file;
}

const read = (file: string, max = 1 << 20, chunk?: number) =>
  [...linesFromEnd(file, max, chunk)].map((b) => b.toString("utf8"));

const openFds = () => fs.readdirSync("/proc/self/fd").length;

describe("linesFromEnd", () => {
  it("gives every complete line, last first, whatever the chunk boundaries", () => {
    const lines = Array.from({ length: 50 }, (_, i) => `{"n":${i},"pad":"${"x".repeat(i * 7)}"}`);
    const file = fileWith(`${lines.join("\n")}\n`);
    const reversed = [...lines].reverse();
    for (const chunk of [1, 2, 7, 64, 1000, 64 * 1024]) expect(read(file, 1 << 20, chunk)).toEqual(reversed);
  });

  it("keeps multi-byte characters whole across chunk boundaries", () => {
    const lines = ['{"t":"héllo wörld"}', '{"t":"日本語のテキスト"}', '{"t":"🙂🙂🙂"}'];
    const file = fileWith(`${lines.join("\n")}\n`);
    for (const chunk of [1, 3, 5]) expect(read(file, 1 << 20, chunk)).toEqual([...lines].reverse());
  });

  it("leaves out a last line still being written, and empty lines", () => {
    const file = fileWith('{"a":1}\n\n{"b":2}\n\n{"c":3');
    expect(read(file, 1 << 20, 3)).toEqual(['{"b":2}', '{"a":1}']);
    expect(read(fileWith('{"only":"unfinished"}'))).toEqual([]);
    expect(read(fileWith(""))).toEqual([]);
  });

  it("passes over a line longer than the bound and gives the lines around it", () => {
    const long = `{"big":"${"y".repeat(5000)}"}`;
    const file = fileWith(`{"a":1}\n${long}\n{"b":2}\n`);
    for (const chunk of [16, 4096, 1 << 20]) expect(read(file, 1000, chunk)).toEqual(['{"b":2}', '{"a":1}']);
    expect(read(file, 6000)).toEqual(['{"b":2}', long, '{"a":1}']);
  });

  it("a missing file has no lines; a symlink is refused", () => {
    const file = fileWith('{"a":1}\n');
    expect(read(path.join(path.dirname(file), "none.ndjson"))).toEqual([]);
    const link = path.join(path.dirname(file), "link.ndjson");
    fs.symlinkSync(file, link);
    expect(() => read(link)).toThrow(/symbolic link/);
  });

  it("reads only as far back as it is asked to, and closes the file when the reader stops early", () => {
    const lines = Array.from({ length: 1000 }, (_, i) => `{"n":${i}}`);
    const file = fileWith(`${lines.join("\n")}\n`);
    const before = openFds();
    const got: string[] = [];
    for (const line of linesFromEnd(file, 1 << 20, 64)) {
      got.push(line.toString("utf8"));
      if (got.length === 3) break;
    }
    expect(got).toEqual(['{"n":999}', '{"n":998}', '{"n":997}']);
    expect(openFds()).toBe(before);
  });
});
