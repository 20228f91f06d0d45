// A parent's records for a mirrored child's log, with a real relay process and a feeder: they are written
// on the far side onto exactly the log the parent decided on, or decided again on the newer one.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { EventLog } from "../../src/artifacts/log.js";
import { readAllRecords } from "../../src/artifacts/reader.js";
import { mirroredChildStore } from "../../src/artifacts/store-mirrored.js";
import type { MirrorFeeder } from "../../src/place/mirror/feeder.js";
import { connect, killAll } from "../helpers/mirror.js";
import { waitFor } from "../helpers/tmux.js";

const dirs: string[] = [];
const feeders: MirrorFeeder[] = [];

afterEach(() => {
  for (const f of feeders.splice(0)) f.close();
  killAll();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A far dir with a started child's log, mirrored to a near dir by a feeder over a real relay. */
async function mirrored() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-mappend-"));
  dirs.push(root);
  const far = path.join(root, "far");
  const near = path.join(root, "near");
  fs.mkdirSync(far, { mode: 0o700 });
  const log = EventLog.open(path.join(far, "events.ndjson"));
  log.append({ type: "child_started", pid: 1, runner: "mock", by: "spawn" });
  log.close();
  const { feeder } = await connect(far, near);
  feeders.push(feeder);
  await waitFor(() => fs.existsSync(path.join(near, "events.ndjson")) && read(near).length === 1, 10_000);
  return { far, near };
}

const read = (dir: string): MusterEvent[] => readAllRecords<MusterEvent>(path.join(dir, "events.ndjson"));
const farAppend = (far: string, e: Parameters<EventLog["append"]>[0]): void => {
  const log = EventLog.open(path.join(far, "events.ndjson"));
  log.append(e);
  log.close();
};

describe("a parent's records for a mirrored log", () => {
  it("are written on the far side and come back; the mirror stays the far log's prefix", async () => {
    const { far, near } = await mirrored();
    const wrote = await mirroredChildStore(near).appendAsParent((events, log) => {
      expect(events.map((e) => e.type)).toEqual(["child_started"]);
      log.append({ type: "child_exited", reason: "lost", detail: "gone", by: "parent" });
      return "done";
    });
    expect(wrote).toBe("done");
    expect(read(far).map((e) => [e.type, e.seq])).toEqual([
      ["child_started", 1],
      ["child_exited", 2],
    ]);
    expect(fs.readFileSync(path.join(near, "events.ndjson"), "utf8")).toBe(
      fs.readFileSync(path.join(far, "events.ndjson"), "utf8"),
    );
    // The request is gone on both sides.
    expect(fs.readdirSync(path.join(near, "appends"))).toEqual([]);
    expect(fs.readdirSync(path.join(far, "appends"))).toEqual([]);
  });

  it("when the host wrote meanwhile, the parent decides again on the newer log: its records land once, after", async () => {
    const { far, near } = await mirrored();
    const seen: string[][] = [];
    await mirroredChildStore(near).appendAsParent((events, log) => {
      seen.push(events.map((e) => e.type));
      // The first time, the host settles its own turn after the parent read the log: that decision is stale.
      if (seen.length === 1)
        farAppend(far, { type: "child_exited", reason: "closed", detail: "", by: "child" });
      if (events.some((e) => e.type === "child_exited")) return;
      log.append({ type: "child_exited", reason: "lost", detail: "gone", by: "parent" });
    });
    expect(seen).toEqual([["child_started"], ["child_started", "child_exited"]]);
    expect(read(far).map((e) => [e.type, e.by])).toEqual([
      ["child_started", "spawn"],
      ["child_exited", "child"],
    ]);
    await waitFor(() => read(near).length === 2, 10_000);
  });

  it("with no link, says the place did not answer and writes nothing here", async () => {
    const { near } = await mirrored();
    for (const f of feeders.splice(0)) f.close();
    killAll();
    const before = fs.readFileSync(path.join(near, "events.ndjson"), "utf8");
    const store = mirroredChildStore(near);
    await expect(
      store.appendAsParent((_events, log) => {
        log.append({ type: "child_exited", reason: "lost", detail: "gone", by: "parent" });
      }),
    ).rejects.toThrow(/place did not take a record within 20s/);
    expect(fs.readFileSync(path.join(near, "events.ndjson"), "utf8")).toBe(before);
  }, 40_000);
});
