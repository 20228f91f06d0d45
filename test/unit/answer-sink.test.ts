import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { MAX_SNAPSHOT_BYTES } from "../../src/artifacts/snapshot.js";
import { ANSWER_TAIL_BYTES, AnswerSink } from "../../src/child/answer.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-sink-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("AnswerSink", () => {
  it("streams to the file; keeps all of an answer that fits a snapshot", () => {
    const file = path.join(dir, "small.md");
    const sink = new AnswerSink(file);
    sink.write("héllo ");
    sink.write("wörld\n");
    sink.close();
    expect(fs.readFileSync(file, "utf8")).toBe("héllo wörld\n");
    expect(sink.exact()?.toString("utf8")).toBe("héllo wörld\n");
    expect(sink.tail()).toEqual({ text: "héllo wörld\n", whole: true });
  });

  it("over the snapshot limit: the file has everything, memory only the end, cut on a character boundary", () => {
    const file = path.join(dir, "big.md");
    const sink = new AnswerSink(file);
    const line = `${"é".repeat(1000)}\n`; // 2001 bytes
    const n = Math.ceil((MAX_SNAPSHOT_BYTES * 3) / Buffer.byteLength(line));
    for (let i = 0; i < n; i++) sink.write(line);
    sink.close();
    expect(fs.statSync(file).size).toBe(n * Buffer.byteLength(line));
    expect(sink.total).toBe(n * Buffer.byteLength(line));
    expect(sink.exact()).toBeUndefined();
    const tail = sink.tail();
    expect(tail.whole).toBe(false);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(ANSWER_TAIL_BYTES);
    expect(Buffer.byteLength(tail.text)).toBeGreaterThan(ANSWER_TAIL_BYTES - 4);
    expect(tail.text).not.toContain("\ufffd");
    expect(tail.text.endsWith(line)).toBe(true);
  });

  it("replace: the final result's text is the answer, in the file and in memory", () => {
    const file = path.join(dir, "replaced.md");
    const sink = new AnswerSink(file);
    sink.write("streamed draft that is longer than the final answer\n");
    sink.replace("final\n");
    sink.close();
    expect(fs.readFileSync(file, "utf8")).toBe("final\n");
    expect(sink.exact()?.toString()).toBe("final\n");
  });

  it("a write that fails stops writing the file, keeps the answer in memory and reports once", () => {
    const errors: Error[] = [];
    // A directory cannot be opened for writing: the sink starts failed.
    const sink = new AnswerSink(dir, (e) => errors.push(e));
    sink.write("still kept\n");
    sink.close();
    expect(errors).toHaveLength(1);
    expect(sink.error?.message).toMatch(/^cannot write /);
    expect(sink.exact()?.toString()).toBe("still kept\n");
  });
});
