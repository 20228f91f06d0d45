import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkWorkflow, type WorkflowDef } from "../../src/workflows/dag/toml.js";
import {
  listRuns,
  processStart,
  RunLog,
  readRun,
  resolveRunId,
  runFiles,
} from "../../src/workflows/run-log.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const DEF: WorkflowDef = {
  name: "w",
  description: "",
  source: "inline",
  steps: [
    { id: "a", agent: "mock", prompt: "p", needs: [] },
    { id: "b", agent: "mock", prompt: "q", needs: ["a"] },
  ],
};

function stateDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "mt-wflog-"));
  dirs.push(d);
  return d;
}

function started(dir: string, runId: string, pid: number, pidStart: string | undefined): RunLog {
  const log = RunLog.create(runFiles(dir, runId), DEF, "in");
  log.append({
    type: "run_started",
    runId,
    workflow: "w",
    source: "inline",
    pid,
    ...(pidStart ? { pidStart } : {}),
    steps: ["a", "b"],
  });
  return log;
}

describe("workflow run record", () => {
  it("folds events into step states; a settled run keeps its status", () => {
    const dir = stateDir();
    const id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
    const log = started(dir, id, process.pid, processStart(process.pid));
    // "a" is ready (no needs) but not started: queued; "b" waits for it: pending.
    expect(readRun(dir, id).steps.map((s) => s.status)).toEqual(["queued", "pending"]);
    log.append({ type: "step_started", stepId: "a", childId: "c1", turnId: "t1", agent: "mock" });
    expect(readRun(dir, id)).toMatchObject({
      status: "running",
      steps: [{ status: "running", childId: "c1" }, {}],
    });
    log.append({ type: "step_settled", stepId: "a", status: "errored", childId: "c1", reason: "boom" });
    log.append({
      type: "step_settled",
      stepId: "b",
      status: "skipped",
      cause: { stepId: "a", status: "errored" },
    });
    log.append({ type: "run_settled", status: "failed" });
    const v = readRun(dir, id);
    expect(v.status).toBe("failed");
    expect(v.steps[1]).toMatchObject({ status: "skipped", cause: { stepId: "a" } });
    // seq continues across writers (a cancel from another process appends to the same log).
    RunLog.open(runFiles(dir, id)).append({ type: "cancel_requested" });
    const seqs = fs
      .readFileSync(runFiles(dir, id).events, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("a run whose runner is gone, or whose pid now belongs to another process, is interrupted", () => {
    const dir = stateDir();
    const live = "0190a1b2-c3d4-7e5f-8a9b-000000000001";
    const reused = "0190a1b2-c3d4-7e5f-8a9b-000000000002";
    const gone = "0190a1b2-c3d4-7e5f-8a9b-000000000003";
    started(dir, live, process.pid, processStart(process.pid));
    started(dir, reused, process.pid, "1");
    started(dir, gone, 2 ** 22 + 12345, undefined);
    expect(readRun(dir, live).status).toBe("running");
    expect(readRun(dir, reused).status).toBe("interrupted");
    expect(readRun(dir, gone).status).toBe("interrupted");
    expect(listRuns(dir).map((r) => r.runId)).toEqual([live, reused, gone]);
    expect(resolveRunId(dir, "00000002")).toBe(reused);
    expect(() => resolveRunId(dir, "0190a1b2")).toThrow(/ambiguous/);
    expect(() => resolveRunId(dir, "../../etc")).toThrow(/invalid workflow run id/);
    expect(() => resolveRunId(dir, "ffffffff")).toThrow(/no workflow run/);
  });

  it("a definition built in code is checked like a file: a step id cannot become a path", () => {
    expect(() => checkWorkflow(DEF)).not.toThrow();
    const evil = { ...DEF, steps: [{ id: "../../x", agent: "mock", prompt: "p", needs: [] }] };
    expect(() => checkWorkflow(evil)).toThrow(/step id "\.\.\/\.\.\/x" is not valid/);
    const loop = { ...DEF, steps: [{ id: "a", agent: "mock", prompt: "p", needs: ["a"] }] };
    expect(() => checkWorkflow(loop)).toThrow(/cycle: a → a/);
  });
});
