import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { MusterEvent } from "../../src/artifacts/events.js";
import { EventLog } from "../../src/artifacts/log.js";
import { type MalformedLine, NdjsonReader, readAllRecords } from "../../src/artifacts/reader.js";
import { applyEvents, emptyState } from "../../src/core/state.js";
import {
  CHECKPOINT_BYTES,
  CHECKPOINT_FILE,
  foldLog,
  type MalformedReport,
} from "../../src/core/state-checkpoint.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function childDir(): { dir: string; events: string; checkpoint: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-checkpoint-"));
  dirs.push(dir);
  return { dir, events: path.join(dir, "events.ndjson"), checkpoint: path.join(dir, CHECKPOINT_FILE) };
}

/** `turns` turns of 40 tool calls each, as a host writes them (~25 KB a turn). */
function writeTurns(events: string, turns: number, from = 0): void {
  const log = EventLog.open(events);
  if (from === 0) log.append({ type: "child_started", pid: 4242, by: "spawn" } as never);
  for (let i = from; i < from + turns; i++) {
    const turnId = `01a20000-0000-7000-8000-${String(i).padStart(12, "0")}`;
    log.append({
      type: "turn_started",
      turnId,
      source: "inbox",
      promptBytes: 10 + i,
      promptSha256: "0".repeat(64),
      promptPath: `prompts/${turnId}.txt`,
    } as never);
    for (let t = 0; t < 40; t++) {
      log.append({
        type: "tool_activity",
        turnId,
        phase: "start",
        name: "Bash",
        summary: `step ${t} ${"s".repeat(200)}`,
      } as never);
      log.append({
        type: "tool_activity",
        turnId,
        phase: "end",
        name: "Bash",
        summary: `step ${t}`,
        ok: true,
      } as never);
    }
    log.append({ type: "usage", turnId, usage: { input: 100 + i, output: 10, cost: 0.01 } } as never);
    log.append({ type: "completion", turnId, status: "completed", text: `answer ${i}` } as never);
  }
  log.close();
}

const keep = (r: MalformedReport, m: MalformedLine) => {
  r.count += 1;
  if (r.spans.length < 20) r.spans.push(m);
};
const fold = (events: string, dir: string) =>
  foldLog(
    dir,
    events,
    (cursor, onMalformed) => new NdjsonReader<MusterEvent>(events, onMalformed, cursor),
    keep,
  );

/** What a reader with no checkpoint makes of the whole log. */
function whole(events: string): { state: ReturnType<typeof emptyState>; malformed: MalformedReport } {
  const malformed: MalformedReport = { count: 0, spans: [] };
  const state = applyEvents(
    emptyState(),
    readAllRecords<MusterEvent>(events, (m) => keep(malformed, m)),
  );
  return { state, malformed };
}

const checkpointCursor = (file: string) =>
  (JSON.parse(fs.readFileSync(file, "utf8")) as { cursor: number }).cursor;

describe("a child's state kept at a byte offset of its log", () => {
  it("a short log gets no checkpoint; a long one does, and a fold from it equals the whole fold", () => {
    const { dir, events, checkpoint } = childDir();
    writeTurns(events, 1);
    expect(fs.statSync(events).size).toBeLessThan(CHECKPOINT_BYTES);
    expect(fold(events, dir)).toEqual(whole(events));
    expect(fs.existsSync(checkpoint)).toBe(false);

    writeTurns(events, 6, 1);
    fs.appendFileSync(events, "not a record\n");
    expect(fold(events, dir)).toEqual(whole(events));
    expect(checkpointCursor(checkpoint)).toBe(fs.statSync(events).size);

    writeTurns(events, 2, 7);
    const folded = fold(events, dir);
    expect(folded).toEqual(whole(events));
    expect(folded.state.turns).toHaveLength(9);
    expect(folded.malformed.count).toBe(1);
    // Each turn's completion is the very record in the completions map, as applyEvents leaves it.
    for (const t of folded.state.turns) expect(t.completion).toBe(folded.state.completions.get(t.turnId));
  });

  it("a fold starts from the checkpoint: what it holds is taken, the log before it is not read again", () => {
    const { dir, events, checkpoint } = childDir();
    writeTurns(events, 6);
    fold(events, dir);
    const cp = JSON.parse(fs.readFileSync(checkpoint, "utf8"));
    cp.state.usage.input = 1_000_000; // as if the log before the offset said so
    fs.writeFileSync(checkpoint, JSON.stringify(cp));
    writeTurns(events, 1, 6);
    const got = fold(events, dir).state.usage!.input;
    expect(got).toBe(1_000_000 + 106);
  });

  it("is not used for a log rewritten in place, replaced, cut short, or folded by other code", () => {
    const { dir, events, checkpoint } = childDir();
    writeTurns(events, 6);
    fold(events, dir);
    const taken = fs.readFileSync(checkpoint, "utf8");
    const tampered = () => {
      const cp = JSON.parse(taken);
      cp.state.usage.input = 1_000_000;
      fs.writeFileSync(checkpoint, JSON.stringify(cp));
    };
    const original = fs.readFileSync(events);

    // Rewritten in place under the same name (same inode), its bytes before the offset changed.
    tampered();
    fs.writeFileSync(
      events,
      Buffer.concat([original.subarray(0, original.length - 40), Buffer.from(`${" ".repeat(39)}\n`)]),
    );
    expect(fold(events, dir)).toEqual(whole(events));

    // Replaced by another child's log, as long or longer.
    tampered();
    const other = childDir();
    writeTurns(other.events, 7);
    fs.renameSync(other.events, events);
    expect(fold(events, dir)).toEqual(whole(events));

    // Cut short.
    tampered();
    fs.truncateSync(events, Math.floor(original.length / 2));
    expect(fold(events, dir)).toEqual(whole(events));

    // Made by another fold (another build's code).
    fs.writeFileSync(events, original);
    fold(events, dir);
    const cp = JSON.parse(fs.readFileSync(checkpoint, "utf8"));
    cp.fold = "0000000000000000";
    cp.state.usage.input = 1_000_000;
    fs.writeFileSync(checkpoint, JSON.stringify(cp));
    expect(fold(events, dir)).toEqual(whole(events));
  });

  it("a checkpoint that is junk or a symlink is folded past and replaced, never followed", () => {
    const { dir, events, checkpoint } = childDir();
    writeTurns(events, 6);
    fs.writeFileSync(checkpoint, "{not json");
    expect(fold(events, dir)).toEqual(whole(events));
    expect(checkpointCursor(checkpoint)).toBe(fs.statSync(events).size);

    const elsewhere = path.join(dir, "elsewhere.json");
    fs.writeFileSync(elsewhere, "keep me");
    fs.rmSync(checkpoint);
    fs.symlinkSync(elsewhere, checkpoint);
    expect(fold(events, dir)).toEqual(whole(events));
    expect(fs.readFileSync(elsewhere, "utf8")).toBe("keep me");
    expect(fs.lstatSync(checkpoint).isFile()).toBe(true);
  });

  it("a state root it cannot write to folds the whole log every time, as before", () => {
    const { dir, events, checkpoint } = childDir();
    writeTurns(events, 6);
    fs.chmodSync(dir, 0o500);
    try {
      // Root writes anyway: there the checkpoint appears, and is then as good as any.
      expect(fold(events, dir)).toEqual(whole(events));
      expect(fold(events, dir)).toEqual(whole(events));
    } finally {
      fs.chmodSync(dir, 0o700);
    }
    if (process.getuid?.() !== 0) expect(fs.existsSync(checkpoint)).toBe(false);
  });
});
