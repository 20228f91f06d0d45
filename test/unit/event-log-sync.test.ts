import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readAllRecords } from "../../src/artifacts/reader.js";
import { REPO } from "../helpers/cli.js";
import { fsyncsOfNode } from "../helpers/strace.js";

const WRITER = path.join(REPO, "test", "fixtures", "event-log-writer.mjs");
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** Appends `types` in a real process under strace; the records written and the fsyncs made on the way. */
function appendTraced(types: string[]): { records: { type: string }[]; fsyncs: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-log-sync-"));
  dirs.push(dir);
  const file = path.join(dir, "events.ndjson");
  const fsyncs = fsyncsOfNode([WRITER, file, ...types]);
  return { records: readAllRecords<{ type: string }>(file), fsyncs };
}

describe("events log durability", () => {
  it("narrative records (progress, tool activity, usage) are written without an fsync each", () => {
    const { records, fsyncs } = appendTraced(["progress", "tool_activity", "usage", "progress"]);
    expect(records.map((r) => r.type)).toEqual(["progress", "tool_activity", "usage", "progress"]);
    expect(fsyncs).toBe(0);
  });

  it("a record that counts is fsync'd, which carries the narrative ones written before it to disk", () => {
    const { records, fsyncs } = appendTraced([
      "progress",
      "tool_activity",
      "usage",
      "completion",
      "child_exited",
    ]);
    expect(records.map((r) => r.type)).toEqual([
      "progress",
      "tool_activity",
      "usage",
      "completion",
      "child_exited",
    ]);
    expect(fsyncs).toBe(2);
  });
});
