import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { pipeline } from "../../src/workflows/code/ctx-flow.js";
import { callFile, callKey, readReplay } from "../../src/workflows/code/replay.js";
import { RunLog, runFiles } from "../../src/workflows/run-log.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("replay keys and the log a resume answers from", () => {
  it("a call's key ignores key order and absent-vs-undefined, and changes with every argument that shapes the child", () => {
    const schema = { type: "object", required: ["a"], properties: { a: { type: "string" } } };
    const reordered = { properties: { a: { type: "string" } }, required: ["a"], type: "object" };
    const base = { agent: "mock", prompt: "p", output: { description: "d", schema } };
    expect(callKey({ ...base, model: undefined })).toBe(
      callKey({ agent: "mock", prompt: "p", output: { schema: reordered, description: "d" } }),
    );
    const variants = [
      { ...base, agent: "other" },
      { ...base, prompt: "q" },
      { ...base, model: "m" },
      { ...base, reasoning: "high" },
      { ...base, cwd: "/tmp" },
      { ...base, output: { description: "d", schema: { ...schema, required: [] } } },
      { agent: "mock", prompt: "p" },
    ];
    const keys = new Set([callKey(base), ...variants.map((v) => callKey(v))]);
    expect(keys.size).toBe(variants.length + 1);
    // No two different prompts share a key (the fields are framed, not concatenated).
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), fc.string(), (a1, p1, a2, p2) => {
        if (a1 === a2 && p1 === p2) return;
        expect(callKey({ agent: a1, prompt: p1 })).not.toBe(callKey({ agent: a2, prompt: p2 }));
      }),
    );
  });

  it("folds completed calls with their keys, orphans, failed calls, and drops later calls where replay ended", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-wfreplay-"));
    dirs.push(dir);
    const files = runFiles(dir, "01a00000-0000-7000-8000-000000000001");
    const log = RunLog.create(
      files,
      { name: "c", description: "", steps: [], source: "c", kind: "code", file: false },
      "",
    );
    const done = (stepId: string, key: string) => {
      fs.mkdirSync(path.dirname(callFile(files, stepId)), { recursive: true });
      fs.writeFileSync(
        callFile(files, stepId),
        JSON.stringify({ id: stepId, agent: "mock", status: "completed" }),
      );
      log.append({ type: "step_started", stepId, childId: `c-${stepId}`, turnId: "t", agent: "mock", key });
      log.append({ type: "step_settled", stepId, status: "completed", key });
    };
    done("agent-1", "k1");
    done("agent-2", "k2");
    done("agent-3", "k3");
    log.append({
      type: "step_started",
      stepId: "agent-4",
      childId: "c4",
      turnId: "t",
      agent: "mock",
      key: "k4",
    });
    log.append({ type: "step_settled", stepId: "agent-5", status: "errored", reason: "x", key: "k5" });
    log.append({
      type: "step_started",
      stepId: "agent-6",
      childId: "c6",
      turnId: "t",
      agent: "mock",
      key: "k6",
    });
    let r = readReplay(files);
    expect([...r.calls].map(([id, c]) => `${id}:${c.key}`)).toEqual([
      "agent-1:k1",
      "agent-2:k2",
      "agent-3:k3",
    ]);
    expect([...r.orphans]).toEqual([
      ["agent-4", "c4"],
      ["agent-6", "c6"],
    ]);
    expect(r.failed).toEqual(["agent-5"]);

    // A later attempt ended replay at agent-2 and made one new call there: agent-3 of the first attempt is gone.
    log.append({ type: "step_settled", stepId: "agent-4", status: "cancelled", key: "k4" });
    log.append({ type: "step_settled", stepId: "agent-6", status: "cancelled", key: "k6" });
    log.append({ type: "replay_ended", stepId: "agent-2", replayed: 1, reason: "differs" });
    done("agent-2", "k2b");
    r = readReplay(files);
    expect([...r.calls].map(([id, c]) => `${id}:${c.key}`)).toEqual(["agent-1:k1", "agent-2:k2b"]);
    expect(r.orphans.size).toBe(0);
  });

  it("ctx.pipeline passes each stage's value on, awaits handles, keeps item order, refuses a non-function stage", async () => {
    const handle = (v: unknown) => ({ id: "h", await: async () => v });
    const out = await pipeline(
      [3, 1, 2],
      [
        async (n: number) => {
          await new Promise((r) => setTimeout(r, n * 5));
          return handle(n * 10);
        },
        (v: number, i: number) => `${i}:${v}`,
      ],
    );
    expect(out).toEqual(["0:30", "1:10", "2:20"]);
    await expect(pipeline([1], [42 as never])).rejects.toThrow(/every stage must be a function/);
    expect(await pipeline([1, 2], [])).toEqual([1, 2]);
  });
});
