import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { processesMentioning, REPO, until, useSandbox } from "../helpers/cli.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfcli");

const write = (rel: string, text: string): string => {
  const file = path.join(sb.cwd, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};

const step = (id: string, prompt: string, needs: string[] = []) =>
  `[[steps]]\nid = "${id}"\nagent = "mock"\nprompt = """${prompt}"""\n${needs.length ? `needs = ${JSON.stringify(needs)}\n` : ""}`;

describe("muster workflow (CLI)", () => {
  it("list shows the bundled review-chain, and a project file of the same name wins", async () => {
    const bundled = await sb.json(["workflow", "list"]);
    expect(bundled.exitCode).toBe(0);
    const rc = bundled.data.workflows.find((w: { name: string }) => w.name === "review-chain");
    expect(rc).toMatchObject({ layer: "bundled", source: path.join(REPO, "workflows", "review-chain.toml") });
    expect(rc.steps.map((s: { id: string }) => s.id)).toEqual(["correctness", "tests", "synthesis"]);

    const mine = write(".muster/workflows/team/review.toml", `name = "review-chain"\n${step("only", "x")}`);
    try {
      const shadowed = await sb.json(["workflow", "list"]);
      const won = shadowed.data.workflows.find((w: { name: string }) => w.name === "review-chain");
      expect(won).toMatchObject({ layer: "project", source: mine });
      expect(won.shadows).toEqual([{ layer: "bundled", source: rc.source }]);
      const human = await sb.run(["workflow", "list"]);
      expect(human.stdout).toMatch(
        /review-chain\s+toml\s+1\s+project\s+\.\/\.muster\/workflows\/team\/review\.toml/,
      );
    } finally {
      fs.rmSync(path.join(sb.cwd, ".muster"), { recursive: true, force: true });
    }
  });

  it("runs the bundled review-chain on the mock agent: progress on stderr, the synthesis on stdout, exit 0", async () => {
    const r = await sb.run(["workflow", "run", "review-chain", "the change under review"]);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const id of ["correctness", "tests", "synthesis"]) {
      expect(r.stderr).toMatch(new RegExp(`step ${id} started: child [0-9a-f]{8} \\(reviewer\\)`));
      expect(r.stderr).toMatch(new RegExp(`step ${id} completed`));
    }
    expect(r.stderr).toMatch(/workflow run [0-9a-f]{8} completed: 3 completed/);
    // Only the terminal step's result is printed.
    expect(r.stdout).toMatch(
      /^── synthesis · reviewer · completed\n# mock answer\n\nTask: Synthesize the findings/,
    );
    expect(r.stdout).not.toContain("Task: Review for correctness");

    const runs = await sb.json(["workflow", "runs"]);
    const run = runs.data.runs.at(-1);
    expect(run).toMatchObject({ workflow: "review-chain", status: "completed" });
    const status = await sb.json(["workflow", "status", run.runId.slice(-8)]);
    expect(status.data.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    // The step's own reasoning override reached its child (the mock reports what it was given).
    const tests = status.data.steps.find((s: { id: string }) => s.id === "tests");
    expect(fs.readFileSync(tests.output, "utf8")).toContain("reasoning: high");
    // The synthesis child got both reviews, in needs order, after the input.
    const synth = status.data.steps.find((s: { id: string }) => s.id === "synthesis");
    const child = await sb.json(["status", synth.childId]);
    const promptDir = path.join(child.data.artifactDir, "prompts");
    const prompt = fs.readFileSync(path.join(promptDir, fs.readdirSync(promptDir)[0]!), "utf8");
    const order = ["## Workflow input", '## Output of step "correctness"', '## Output of step "tests"'].map(
      (h) => prompt.indexOf(h),
    );
    expect(order.every((i) => i > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(prompt).toContain("Task: Review for correctness and regressions.");
  });

  it("a failing step: exit 1, its dependent skipped with the cause; --json has every step in declaration order", async () => {
    const file = write(
      "flows/fails.toml",
      `name = "fails"\n${step("bad", "Fail.\nmock: exit=2")}${step("dep", "After bad.", ["bad"])}${step("ok", "Fine.")}`,
    );
    const r = await sb.json(["workflow", "run", file, "input"]);
    expect(r.exitCode).toBe(1);
    expect(r.data.status).toBe("failed");
    expect(r.data.steps.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual([
      "bad:errored",
      "dep:skipped",
      "ok:completed",
    ]);
    expect(r.data.steps[1]).toMatchObject({ cause: { stepId: "bad", status: "errored" } });
    expect(r.data.results.map((s: { id: string }) => s.id)).toEqual(["dep", "ok"]);
    expect(r.stderr).toMatch(/step dep skipped: needs "bad", which errored/);
  });

  it("step children are closed once their step settles (resumable, no pane left); --keep leaves them idle", async () => {
    const file = write(
      "flows/two.toml",
      `name = "two"\n${step("a", "First.")}${step("b", "Second.", ["a"])}`,
    );
    const childrenOf = async (r: { data: { steps: { childId: string }[] } }) =>
      Promise.all(r.data.steps.map(async (s) => (await sb.json(["status", s.childId])).data));
    const closed = await sb.json(["workflow", "run", file, "x"]);
    expect(closed.exitCode, closed.stderr).toBe(0);
    const gone = await childrenOf(closed);
    expect(gone.map((c) => c.status)).toEqual(["closed", "closed"]);
    // Their hosts (and so their panes) are gone.
    await until(() => gone.every((c) => processesMentioning(c.artifactDir).length === 0), 10_000);
    // Closed, not lost: the answer stays, and the child continues with spawn --resume.
    const again = await sb.json(["spawn", "--resume", gone[0].id, "--wait", "one more"]);
    expect(again.exitCode, JSON.stringify(again.data)).toBe(0);
    expect(again.data.results[0]).toMatchObject({ status: "completed" });
    await sb.run(["cancel", gone[0].id]);

    const kept = await sb.json(["workflow", "run", file, "x", "--keep"]);
    expect(kept.exitCode, kept.stderr).toBe(0);
    const open = await childrenOf(kept);
    expect(open.map((c) => c.status)).toEqual(["idle", "idle"]);
    expect(open.every((c) => processesMentioning(c.artifactDir).length > 0)).toBe(true);
    await sb.run(["cancel", ...open.map((c) => c.id)]);
  });

  it("bad definitions are refused with exit 2 before any run is created", async () => {
    const before = (await sb.json(["workflow", "runs"])).data.runs.length;
    const bad = write("flows/bad.toml", 'name = "bad"\n[[steps]]\nid = "a"\nagent = mock\n');
    const r = await sb.run(["workflow", "run", bad]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/^muster: workflow .*bad\.toml:4:\d+: invalid TOML/);
    const cyc = write("flows/cycle.toml", `name = "cyc"\n${step("a", "x", ["b"])}${step("b", "y", ["a"])}`);
    expect((await sb.run(["workflow", "run", cyc])).stderr).toMatch(/cycle: a → b → a/);
    const agent = write(
      "flows/agent.toml",
      'name = "ag"\n[[steps]]\nid = "a"\nagent = "nobody"\nprompt = "p"\n',
    );
    const ra = await sb.run(["workflow", "run", agent]);
    expect(ra.exitCode).toBe(2);
    expect(ra.stderr).toMatch(/unknown agent: step "a" uses "nobody"/);
    expect((await sb.run(["workflow", "run", "no-such-workflow"])).stderr).toMatch(/unknown workflow/);
    expect((await sb.run(["workflow", "status", "../x"])).exitCode).toBe(2);
    expect((await sb.json(["workflow", "runs"])).data.runs.length).toBe(before);
  });

  it("workflow cancel from another process cancels the running step's child and skips what has not started", async () => {
    const file = write(
      "flows/long.toml",
      `name = "long"\n${step("hang", "Hang.\nmock: hang")}${step("after", "After.", ["hang"])}`,
    );
    const runner = runInBackground(sb, file, true);
    const running = await whenStepRunning(sb, "long");
    const c = await sb.json(["workflow", "cancel", running.runId]);
    expect(c.exitCode).toBe(0);
    expect(c.data.status).toBe("cancelled");
    const done = await runner;
    expect(done.exitCode).toBe(3);
    const out = JSON.parse(String(done.stdout));
    expect(out.steps.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual([
      "hang:cancelled",
      "after:skipped",
    ]);
    const child = await sb.json(["status", out.steps[0].childId]);
    expect(child.data.status).toBe("closed");
    expect((await sb.run(["workflow", "cancel", running.runId])).exitCode).toBe(2);
  });

  it("a run whose runner was killed shows as interrupted; cancel settles it and cancels its running child", async () => {
    const file = write(
      "flows/orphan.toml",
      `name = "orphan"\n${step("hang", "Hang.\nmock: hang")}${step("next", "Next.", ["hang"])}`,
    );
    const runner = runInBackground(sb, file);
    const running = await whenStepRunning(sb, "orphan");
    runner.kill("SIGKILL");
    await runner;
    const st = await sb.json(["workflow", "status", running.runId]);
    expect(st.data.status).toBe("interrupted");
    // Its child is a real child in its own pane: it outlives the runner until cancelled.
    expect((await sb.json(["status", running.steps[0].childId])).data.status).toBe("running");
    const c = await sb.json(["workflow", "cancel", running.runId]);
    expect(c.exitCode).toBe(0);
    expect(c.data.status).toBe("cancelled");
    expect(c.data.steps.map((s: { id: string; status: string }) => `${s.id}:${s.status}`)).toEqual([
      "hang:cancelled",
      "next:skipped",
    ]);
    expect((await sb.json(["status", running.steps[0].childId])).data.status).toBe("closed");
  });

  it("Ctrl-C on workflow run cancels the run's children and exits 130", async () => {
    const file = write(
      "flows/interrupt.toml",
      `name = "interrupt"\n${step("hang", "Hang.\nmock: hang")}${step("then", "Then.", ["hang"])}`,
    );
    const runner = runInBackground(sb, file, true);
    const running = await whenStepRunning(sb, "interrupt");
    runner.kill("SIGINT");
    const done = await runner;
    expect(done.exitCode).toBe(130);
    expect(JSON.parse(String(done.stdout)).status).toBe("cancelled");
    expect((await sb.json(["workflow", "status", running.runId])).data.status).toBe("cancelled");
    expect((await sb.json(["status", running.steps[0].childId])).data.status).toBe("closed");
  });

  it("resume after kill -9 of the runner: finished steps are not re-run, a child still running is waited for, the rest run", async () => {
    const gate = path.join(sb.cwd, "gate-resume");
    const file = write(
      "flows/crash.toml",
      `name = "crash"\n${step("a", "A.")}${step("b", `B.\nmock: gate=${encodeURIComponent(gate)}`, ["a"])}${step("c", "C.", ["b"])}`,
    );
    const runner = runInBackground(sb, file);
    const before = await whenStepRunning(sb, "crash", 1);
    runner.kill("SIGKILL");
    await runner;
    expect((await sb.json(["workflow", "status", before.runId])).data.status).toBe("interrupted");
    fs.writeFileSync(gate, "open");
    const r = await sb.json(["workflow", "resume", before.runId.slice(-8)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.runId).toBe(before.runId);
    expect(r.data.steps.map((s: { status: string }) => s.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    // a kept its result and b its child: neither started again.
    expect(r.data.steps[0].childId).toBe(before.steps[0].childId);
    expect(r.data.steps[1].childId).toBe(before.steps[1].childId);
    const events = fs
      .readFileSync(path.join(r.data.dir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const startedOf = (id: string) =>
      events.filter((e) => e.type === "step_started" && e.stepId === id).length;
    expect([startedOf("a"), startedOf("b"), startedOf("c")]).toEqual([1, 1, 1]);
    expect(events.filter((e) => e.type === "run_resumed")).toEqual([
      expect.objectContaining({ rerun: ["b", "c"] }),
    ]);
    expect((await sb.json(["workflow", "status", before.runId])).data.status).toBe("completed");
    expect((await sb.run(["workflow", "resume", before.runId])).exitCode).toBe(2);
  });

  it("resume of a cancelled run starts its cancelled step again in a new child", async () => {
    const gate = path.join(sb.cwd, "gate-again");
    const file = write(
      "flows/again.toml",
      `name = "again"\n${step("x", `X.\nmock: gate=${encodeURIComponent(gate)}`)}${step("y", "Y.", ["x"])}`,
    );
    const runner = runInBackground(sb, file);
    const before = await whenStepRunning(sb, "again");
    expect((await sb.json(["workflow", "cancel", before.runId])).data.status).toBe("cancelled");
    expect((await runner).exitCode).toBe(3);
    fs.writeFileSync(gate, "open");
    const r = await sb.json(["workflow", "resume", before.runId]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
    expect(r.data.steps[0].childId).not.toBe(before.steps[0].childId);
  });

  it("runs the bundled scout-then-plan on the mock agent: two explorers, then the planner with both findings", async () => {
    const r = await sb.json(["workflow", "run", "scout-then-plan", "add rate limiting"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(
      r.data.steps.map(
        (s: { id: string; agent: string; status: string }) => `${s.id}:${s.agent}:${s.status}`,
      ),
    ).toEqual(["where:explorer:completed", "tests:explorer:completed", "plan:planner:completed"]);
    expect(r.data.results.map((s: { id: string }) => s.id)).toEqual(["plan"]);
    expect(r.data.results[0].text).toContain("Task: Plan the task below from the scouts' findings");
    const child = await sb.json(["status", r.data.steps[2].childId]);
    const promptDir = path.join(child.data.artifactDir, "prompts");
    const prompt = fs.readFileSync(path.join(promptDir, fs.readdirSync(promptDir)[0]!), "utf8");
    expect(prompt).toContain("## Workflow input\n\nadd rate limiting\n");
    expect(prompt.indexOf('## Output of step "where"')).toBeLessThan(
      prompt.indexOf('## Output of step "tests"'),
    );
    expect(prompt).toContain("Task: Find where the task below would be implemented");
  });
});
