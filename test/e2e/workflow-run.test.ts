import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { type Progress, runWorkflow } from "../../src/workflows/dag/run.js";
import { parseWorkflow } from "../../src/workflows/dag/toml.js";
import { musterHost } from "../../src/workflows/host.js";
import { readRun } from "../../src/workflows/run-log.js";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wfrun");

const step = (id: string, prompt: string, needs: string[] = []) =>
  `[[steps]]\nid = "${id}"\nagent = "mock"\nprompt = """${prompt}"""\n${needs.length ? `needs = ${JSON.stringify(needs)}\n` : ""}`;

/** The exact prompt the child of a settled step received (prompts/<turn>.txt in its artifact dir). */
function promptOf(m: ReturnType<typeof createMuster>, childId: string): string {
  const dir = path.join(m.child(childId).files.dir, "prompts");
  const files = fs.readdirSync(dir);
  expect(files).toHaveLength(1);
  return fs.readFileSync(path.join(dir, files[0]!), "utf8");
}

describe("TOML workflow runs on real children (mock agent)", () => {
  it("a dependent receives the input and its dependencies' outputs, labelled, in needs order; the run is recorded", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const def = parseWorkflow(
      `name = "assemble"\n${step("first", "Say alpha.\nmock: reply=ALPHA-OUTPUT")}${step("second", "Say beta.\nmock: reply=BETA-OUTPUT")}${step("join", "Join them.", ["second", "first"])}`,
      "inline",
    );
    const seen: Progress[] = [];
    const run = await runWorkflow(musterHost(m), def, "the shared input", {
      onProgress: (p) => seen.push(p),
    });
    expect(run.status).toBe("completed");
    expect(run.steps.map((s) => [s.id, s.status])).toEqual([
      ["first", "completed"],
      ["second", "completed"],
      ["join", "completed"],
    ]);
    expect(run.results.map((s) => s.id)).toEqual(["join"]);
    // The mock echoes its task (the prompt's first line) in its answer.
    expect(run.results[0]!.text).toContain("Task: Join them.");

    const joined = promptOf(m, run.steps[2]!.childId!);
    expect(joined).toBe(
      'Join them.\n\n## Workflow input\n\nthe shared input\n\n## Output of step "second"\n\nBETA-OUTPUT\n\n## Output of step "first"\n\nALPHA-OUTPUT\n',
    );
    // Every step gets the input, heads too.
    expect(promptOf(m, run.steps[0]!.childId!)).toContain("## Workflow input\n\nthe shared input");

    // The durable record: input, definition, event log with child ids, outputs.
    expect(fs.readFileSync(path.join(run.dir, "input.txt"), "utf8")).toBe("the shared input");
    expect(path.dirname(path.dirname(run.dir))).toBe(m.paths.dir);
    const events = fs
      .readFileSync(path.join(run.dir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events[0]).toMatchObject({ type: "run_started", runId: run.runId, workflow: "assemble", seq: 1 });
    expect(events.at(-1)).toMatchObject({ type: "run_settled", status: "completed" });
    const startedJoin = events.find((e) => e.type === "step_started" && e.stepId === "join");
    expect(startedJoin.childId).toBe(run.steps[2]!.childId);
    // join starts only after both of its needs settled.
    const settledAt = (id: string) => events.findIndex((e) => e.type === "step_settled" && e.stepId === id);
    expect(events.indexOf(startedJoin)).toBeGreaterThan(Math.max(settledAt("first"), settledAt("second")));
    expect(fs.readFileSync(path.join(run.dir, "outputs", "first.md"), "utf8")).toBe("ALPHA-OUTPUT");
    const view = readRun(m.paths.dir, run.runId);
    expect(view.status).toBe("completed");
    expect(view.steps.map((s) => s.status)).toEqual(["completed", "completed", "completed"]);
    expect(seen.filter((p) => p.type === "step_started")).toHaveLength(3);
  });

  it("a failed step skips only its dependents (with the cause); siblings run; results in declaration order", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    // "slow" is declared first and finishes last: results still come back in declaration order.
    const def = parseWorkflow(
      `name = "branches"\n${step("slow", "Slow sibling.\nmock: sleep=2")}${step("broken", "Fail.\nmock: exit=3")}${step("after", "Never runs.", ["broken"])}${step("later", "Never runs either.", ["after"])}${step("fast", "Fast sibling.")}${step("uses-fast", "Uses fast.", ["fast"])}`,
      "inline",
    );
    const before = (await m.list()).length;
    const run = await runWorkflow(musterHost(m), def, "");
    expect(run.status).toBe("failed");
    expect(run.steps.map((s) => [s.id, s.status])).toEqual([
      ["slow", "completed"],
      ["broken", "errored"],
      ["after", "skipped"],
      ["later", "skipped"],
      ["fast", "completed"],
      ["uses-fast", "completed"],
    ]);
    const after = run.steps[2]!;
    expect(after.cause).toEqual({ stepId: "broken", status: "errored" });
    expect(after.reason).toBe('needs "broken", which errored');
    expect(after.childId).toBeUndefined();
    expect(run.steps[3]!.cause).toEqual({ stepId: "after", status: "skipped" });
    // Terminal steps (needed by none), in declaration order.
    expect(run.results.map((s) => s.id)).toEqual(["slow", "later", "uses-fast"]);
    // Skipped steps started no child.
    expect((await m.list()).length - before).toBe(4);
    expect(run.steps.filter((s) => s.childId).length).toBe(4);
    // All ready steps start at once: the heads all started before the slow one settled.
    const events = fs
      .readFileSync(path.join(run.dir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const at = (type: string, id: string) => events.findIndex((e) => e.type === type && e.stepId === id);
    for (const head of ["slow", "broken", "fast"]) expect(at("step_started", head)).toBeGreaterThan(0);
    expect(Math.max(at("step_started", "broken"), at("step_started", "fast"))).toBeLessThan(
      at("step_settled", "slow"),
    );
    // With no input, no input section is sent.
    expect(promptOf(m, run.steps[0]!.childId!)).not.toContain("Workflow input");
  });

  it("an unknown agent is refused before anything is created", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const def = parseWorkflow(
      `name = "bad-agent"\n[[steps]]\nid = "x"\nagent = "no-such-agent"\nprompt = "p"\n`,
      "inline",
    );
    const runsBefore = fs.existsSync(path.join(m.paths.dir, "workflows"))
      ? fs.readdirSync(path.join(m.paths.dir, "workflows")).length
      : 0;
    await expect(runWorkflow(musterHost(m), def, "")).rejects.toThrow(
      /unknown agent: step "x" uses "no-such-agent"/,
    );
    const runsAfter = fs.existsSync(path.join(m.paths.dir, "workflows"))
      ? fs.readdirSync(path.join(m.paths.dir, "workflows")).length
      : 0;
    expect(runsAfter).toBe(runsBefore);
  });
});
