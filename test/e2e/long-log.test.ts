import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { CHECKPOINT_BYTES, CHECKPOINT_FILE } from "../../src/core/state-checkpoint.js";
import { BIN, useSandbox } from "../helpers/cli.js";
import { bytesReadFrom, readsOfNode } from "../helpers/strace.js";

const sb = useSandbox("mt-longlog");

/** The reads of one CLI command run under strace, in the sandbox. */
const cliTrace = (args: string[]): string => readsOfNode([BIN, ...args], sb);

describe("a long-lived child's log is folded once, not by every command", () => {
  it("status, ls and inbox read only what the log gained since the last reader's checkpoint, and say the same", async () => {
    // Eight turns of 100 tool calls each: ~50 KB of log a turn.
    const first = (await sb.json(["spawn", "--wait", "mock: tools=100"])).data;
    const id = first.spawned.id as string;
    const dir = first.results[0].artifactDir as string;
    for (let i = 0; i < 7; i++) await sb.json(["send", id, "--wait", "mock: tools=100"]);
    const events = path.join(dir, "events.ndjson");
    expect(fs.statSync(events).size).toBeGreaterThan(4 * CHECKPOINT_BYTES);

    // The first reader folds the whole log and keeps the state where the log ended.
    const whole = (await sb.json(["status", id])).data;
    expect(whole.turns).toBe(8);
    const checkpoint = path.join(dir, CHECKPOINT_FILE);
    expect(fs.existsSync(checkpoint)).toBe(true);

    // One more turn, then readers fold only its records.
    await sb.json(["send", id, "--wait", "mock: tools=100"]);
    const size = fs.statSync(events).size;
    // The inbox too: a child's open requests are folded with its state, not found by reading its whole log.
    for (const args of [["status", id], ["ls"], ["inbox"]]) {
      const read = bytesReadFrom(cliTrace(args), (f) => f === events);
      expect(read).toBeGreaterThan(0);
      expect(read).toBeLessThan(2 * CHECKPOINT_BYTES);
      expect(read).toBeLessThan(size / 4);
    }

    // What they say is what a fold of the whole log says.
    const viaCheckpoint = (await sb.run(["status", "--json", id])).stdout;
    fs.rmSync(checkpoint);
    const viaWholeLog = (await sb.run(["status", "--json", id])).stdout;
    expect(JSON.parse(viaCheckpoint).turns).toBe(9);
    expect(viaCheckpoint).toBe(viaWholeLog);
  }, 90_000);
});
