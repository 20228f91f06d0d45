import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { runCodeWorkflow } from "../../src/workflows/code/code.js";
import { resumeCodeWorkflow } from "../../src/workflows/code/code-resume.js";
import { musterHost } from "../../src/workflows/host.js";
import { readRun } from "../../src/workflows/run-log.js";
import { runSandboxed } from "../../src/workflows/sandbox/sandbox.js";
import { useSandbox } from "../helpers/cli.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfreplay");

// biome-ignore lint/suspicious/noExplicitAny: test code reads records loosely
const eventsOf = (dir: string): any[] =>
  fs
    .readFileSync(path.join(dir, "events.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

const startsOf = (events: { type: string; stepId?: string }[], id: string): number =>
  events.filter((e) => e.type === "step_started" && e.stepId === id).length;

describe("workflow resume of code workflows: deterministic replay from the run log", () => {
  it("kill -9 the runner with one call settled and one running: resume answers the settled call from the log (same child, one spawn) and runs the other again", async () => {
    const gate = path.join(sb.cwd, "gate-replay");
    const file = path.join(sb.cwd, "flows", "replay.mjs");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      [
        "export default async (ctx, input) => {",
        `  const a = await ctx.agent({ agent: "mock", prompt: "First " + input }).await();`,
        `  const b = await ctx.agent({ agent: "mock", prompt: "Second after " + a.status + "\\nmock: gate=${encodeURIComponent(gate)}" }).await();`,
        "  return [a.childId, a.text.split('\\n')[2], b.status, b.text.split('\\n')[2]];",
        "};",
      ].join("\n"),
    );
    const runner = runInBackground(sb, file, true);
    const before = await whenStepRunning(sb, "replay", 1);
    runner.kill("SIGKILL");
    await runner;
    expect((await sb.json(["workflow", "status", before.runId])).data.status).toBe("interrupted");
    fs.writeFileSync(gate, "open");

    const r = await sb.json(["workflow", "resume", before.runId.slice(-8)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.runId).toBe(before.runId);
    expect(r.data.status).toBe("completed");
    const [aChild, aTask, bStatus, bTask] = r.data.result;
    expect(aChild).toBe(before.steps[0].childId);
    expect([aTask, bStatus, bTask]).toEqual(["Task: First", "completed", "Task: Second after completed"]);
    expect(r.data.steps.map((a: { childId: string }) => a.childId)).toEqual([
      before.steps[0].childId,
      expect.not.stringMatching(before.steps[1].childId),
    ]);
    expect(r.stderr).toMatch(/agent-1 completed \(from the log: child [0-9a-f]{8}\)/);
    expect(r.stderr).toMatch(/replay ended at agent-2 after 1 call\(s\): the log has no completed agent-2/);

    const events = eventsOf(r.data.dir);
    expect([startsOf(events, "agent-1"), startsOf(events, "agent-2")]).toEqual([1, 2]);
    expect(events.filter((e) => e.type === "run_resumed")).toEqual([
      expect.objectContaining({ rerun: ["agent-2"] }),
    ]);
    expect(events.find((e) => e.type === "replay_ended")).toMatchObject({ stepId: "agent-2", replayed: 1 });
    // The child the killed runner left running was cancelled, not left to answer nobody.
    expect((await sb.json(["status", before.steps[1].childId])).data.status).toBe("closed");
    const status = await sb.json(["workflow", "status", before.runId]);
    expect(status.data.status).toBe("completed");
    expect(status.data.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
    expect((await sb.run(["workflow", "resume", before.runId])).exitCode).toBe(2);
  });

  it("the first call whose arguments differ from the log ends replay: later calls start children even when they match", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const host = musterHost(m);
    const first = await runCodeWorkflow(
      host,
      "diverge",
      async (ctx) => {
        for (const p of ["A", "B", "C", "D"]) await ctx.agent({ agent: "mock", prompt: p }).await();
        throw new Error("gave up after D");
      },
      "in",
    );
    expect(first.status).toBe("failed");
    const logged = first.steps.map((a) => a.childId);
    const again = await resumeCodeWorkflow(host, first.runId, {
      fn: async (ctx, input) => {
        const out = [];
        for (const p of ["A", "B changed", "C"])
          out.push(await ctx.agent({ agent: "mock", prompt: p }).await());
        return { input, children: out.map((r) => r.childId) };
      },
    });
    expect(again.status, again.error).toBe("completed");
    const children = (again.result as { input: string; children: string[] }).children;
    expect((again.result as { input: string }).input).toBe("in");
    expect(children[0]).toBe(logged[0]);
    expect(children[1]).not.toBe(logged[1]);
    expect(children[2]).not.toBe(logged[2]);
    const events = eventsOf(again.dir);
    expect(events.filter((e) => e.type === "replay_ended")).toEqual([
      expect.objectContaining({
        stepId: "agent-2",
        replayed: 1,
        reason: "its arguments differ from the logged call's",
      }),
    ]);
    expect(["agent-1", "agent-2", "agent-3"].map((id) => startsOf(events, id))).toEqual([1, 2, 2]);
    // The status shows this attempt's calls: the old agent-4, which the new path never made, is gone.
    const view = readRun(m.paths.dir, first.runId);
    expect(view.status).toBe("completed");
    expect(view.steps.map((s) => `${s.id}:${s.status}`)).toEqual([
      "agent-1:completed",
      "agent-2:completed",
      "agent-3:completed",
    ]);
    // A function handed to the library cannot be found again by itself.
    const lone = await runCodeWorkflow(
      host,
      "lone",
      async () => {
        throw new Error("x");
      },
      "",
    );
    await expect(resumeCodeWorkflow(host, lone.runId)).rejects.toThrow(/resume it with resumeCodeWorkflow/);
  });

  it("a cancelled sandboxed run resumes from its kept program: the settled call is replayed, the cancelled one runs again", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const host = musterHost(m);
    const gate = path.join(sb.cwd, "gate-sandbox-replay");
    const program = [
      `const a = await ctx.agent({ agent: "mock", prompt: "One" }).await();`,
      `const b = await ctx.agent({ agent: "mock", prompt: "Two\\nmock: gate=${encodeURIComponent(gate)}" }).await();`,
      `return [a.childId, b.status];`,
    ].join("\n");
    const stop = new AbortController();
    const first = await runSandboxed(program, "", host, {
      signal: stop.signal,
      onProgress: (p) => {
        if (p.type === "agent_started" && p.id === "agent-2") stop.abort();
      },
    });
    expect(first.status).toBe("cancelled");
    fs.writeFileSync(gate, "open");
    const again = await resumeCodeWorkflow(host, first.runId);
    expect(again.status, again.error).toBe("completed");
    expect(again.result).toEqual([first.steps[0]!.childId, "completed"]);
    expect(["agent-1", "agent-2"].map((id) => startsOf(eventsOf(again.dir), id))).toEqual([1, 2]);
  });
});
