import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { localChildStore, localChildStores } from "../../src/artifacts/store-local.js";
import { uuidv7 } from "../../src/util/ids.js";

const dirs: string[] = [];
const tmpDir = (): string => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-store-"));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("local ChildStore", () => {
  it("appends from the parent after the log's last seq, and concurrent appenders take turns under the lock", async () => {
    const store = localChildStore(tmpDir());
    fs.writeFileSync(store.eventsFile, `${JSON.stringify({ v: 1, seq: 3, type: "child_started" })}\n`);
    const seen: number[] = [];
    await Promise.all(
      [1, 2].map(() =>
        store.appendAsParent(async (events, log) => {
          seen.push(events.length);
          // Widens the window between read and append: without the lock both would read one record.
          await new Promise((r) => setTimeout(r, 50));
          log.append({ type: "progress", text: "x" } as never);
        }),
      ),
    );
    // Each appender saw the log as the other left it: one read 1 record, the next 2.
    expect(seen.sort()).toEqual([1, 2]);
    expect(store.readEvents().map((e) => e.seq)).toEqual([3, 4, 5]);
  });

  it("writes an answer once and tells a second one apart; a request id that is no UUID never becomes a path", () => {
    const store = localChildStore(tmpDir());
    const id = uuidv7();
    expect(store.hasAnswer(id)).toBe(false);
    expect(store.writeAnswer(id, "yes")).toBe(true);
    expect(store.writeAnswer(id, "no")).toBe(false);
    expect(store.hasAnswer(id)).toBe(true);
    expect(JSON.parse(fs.readFileSync(path.join(store.files.answers, `${id}.json`), "utf8")).text).toBe(
      "yes",
    );
    expect(store.hasAnswer("../../meta")).toBe(false);
    expect(() => store.writeAnswer("../../meta", "x")).toThrow(/invalid request id/);
  });

  it("lists only the children's folders (full ids), and an absent root as none", () => {
    const root = tmpDir();
    const a = uuidv7();
    fs.mkdirSync(path.join(root, a));
    fs.mkdirSync(path.join(root, "not-an-id"));
    fs.writeFileSync(path.join(root, uuidv7()), "a file, not a folder");
    expect(localChildStores(root).list()).toEqual([a]);
    expect(localChildStores(path.join(root, "gone")).list()).toEqual([]);
    expect(() => localChildStores(root).child("../x")).toThrow(/invalid child id/);
  });
});
