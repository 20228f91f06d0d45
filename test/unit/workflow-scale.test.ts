import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWorkflow } from "../../src/workflows/dag/run.js";
import { checkAgents, findCycle, parseWorkflow, type WorkflowDef } from "../../src/workflows/dag/toml.js";
import type { StepOutcome, WorkflowHost } from "../../src/workflows/host.js";
import { readRun } from "../../src/workflows/run-log.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/**
 * A host whose children answer on the next turn of the event loop; it counts how many are in flight at once
 * (spawned, turn not yet settled), and can hold every turn until released.
 */
class CountingHost implements WorkflowHost {
  inFlight = 0;
  maxInFlight = 0;
  spawned = 0;
  private held: (() => void)[] = [];
  hold = false;
  // The scheduler is under test, not the disk: on a loaded machine 10,000 fsynced records take minutes.
  readonly dir = fs.mkdtempSync(
    path.join(fs.existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir(), "mt-wfscale-"),
  );
  constructor() {
    dirs.push(this.dir);
  }
  agents(): Set<string> {
    return new Set(["mock"]);
  }
  stateDir(): string {
    return this.dir;
  }
  async spawn(): Promise<{ id: string; turnId: string }> {
    this.spawned += 1;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return { id: `c${this.spawned}`, turnId: "t" };
  }
  async send(): Promise<{ turnId: string }> {
    throw new Error("no follow-ups here");
  }
  async wait(): Promise<StepOutcome> {
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    else await new Promise((r) => setImmediate(r));
    this.inFlight -= 1;
    return { status: "completed", text: "ok" };
  }
  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }
  heldCount(): number {
    return this.held.length;
  }
  async cancel(): Promise<void> {}
}

const independent = (n: number): WorkflowDef => ({
  name: "wide",
  description: "",
  source: "<test>",
  steps: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, agent: "mock", prompt: "p", needs: [] })),
});

describe("TOML workflows at scale", () => {
  it("10,000 independent ready steps: at most `concurrency` in flight, the rest queued; all complete", async () => {
    const host = new CountingHost();
    const run = await runWorkflow(host, independent(10_000), "", { concurrency: 8 });
    expect(run.status).toBe("completed");
    expect(run.steps.filter((s) => s.status === "completed")).toHaveLength(10_000);
    expect(host.spawned).toBe(10_000);
    expect(host.maxInFlight).toBe(8);
  }, 120_000);

  it("ready steps beyond the bound show as queued in the run's status while it runs", async () => {
    const host = new CountingHost();
    host.hold = true;
    const def = independent(10);
    def.steps.push({ id: "join", agent: "mock", prompt: "p", needs: ["s0", "s1"] });
    let runId = "";
    const done = runWorkflow(host, def, "", {
      concurrency: 3,
      onProgress: (p) => {
        if (p.type === "run_started") runId = p.runId;
      },
    });
    while (host.heldCount() < 3) await new Promise((r) => setTimeout(r, 5));
    const view = readRun(host.dir, runId);
    const by = (st: string) => view.steps.filter((s) => s.status === st).map((s) => s.id);
    expect(by("running")).toEqual(["s0", "s1", "s2"]);
    expect(by("queued")).toEqual(["s3", "s4", "s5", "s6", "s7", "s8", "s9"]);
    // Its needs have not completed yet: it is pending, not queued.
    expect(by("pending")).toEqual(["join"]);
    host.release();
    expect((await done).status).toBe("completed");
    expect(host.maxInFlight).toBe(3);
  });

  it("a chain of 10,000 skipped steps settles without overflowing the stack", async () => {
    const host = new CountingHost();
    const steps = Array.from({ length: 10_000 }, (_, i) => ({
      id: `s${i}`,
      agent: "mock",
      prompt: "p",
      needs: i === 0 ? [] : [`s${i - 1}`],
    }));
    // The head fails to start: every other step is skipped, each because of the one before it.
    host.spawn = async () => {
      throw new Error("refused");
    };
    const run = await runWorkflow(host, { name: "chain", description: "", source: "<t>", steps }, "");
    expect(run.status).toBe("failed");
    expect(run.steps[0]!.status).toBe("errored");
    expect(run.steps.filter((s) => s.status === "skipped")).toHaveLength(9_999);
  }, 120_000);

  it("a cycle of 5,000 steps is named (iteratively), in one bounded line", () => {
    const n = 5_000;
    const toml = Array.from(
      { length: n },
      (_, i) => `[[steps]]\nid = "s${i}"\nagent = "mock"\nprompt = "p"\nneeds = ["s${(i + 1) % n}"]\n`,
    ).join("");
    let err: Error | undefined;
    try {
      parseWorkflow(`name = "loop"\n${toml}`, "loop.toml");
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).toMatch(/steps form a cycle: s0 → s1 → s2 → s3 → s4 → … \(4,995 more\) → s0$/);
    expect(err!.message.length).toBeLessThan(300);
    expect(findCycle(parseWorkflowSteps(20_000))).toHaveLength(20_001);
  });

  it("an unknown agent or need in 10,000 steps: the first few named and a count of the rest", () => {
    const def = independent(10_000);
    for (const s of def.steps) s.agent = "nope";
    let err: Error | undefined;
    try {
      checkAgents(def, new Set(["mock"]));
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).toMatch(
      /unknown agent: step "s0" uses "nope", .*step "s4" uses "nope" and 9,995 more$/,
    );
    expect(err!.message.length).toBeLessThan(400);

    const toml = Array.from(
      { length: 10_000 },
      (_, i) => `[[steps]]\nid = "s${i}"\nagent = "mock"\nprompt = "p"\nneeds = ["gone${i}"]\n`,
    ).join("");
    expect(() => parseWorkflow(`name = "bad"\n${toml}`, "bad.toml")).toThrow(
      /step "s0" needs "gone0", .* and 9,995 more, which are not steps \(steps: s0, s1, s2, s3, s4 and 9,995 more\)$/,
    );
  });
});

/** A ring of n steps, each needing the next. */
function parseWorkflowSteps(n: number): WorkflowDef["steps"] {
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    agent: "mock",
    prompt: "p",
    needs: [`s${(i + 1) % n}`],
  }));
}
