import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { type AgentResult, type CodeProgress, runCodeWorkflow } from "../../src/workflows/code/code.js";
import { musterHost } from "../../src/workflows/host.js";
import { readRun } from "../../src/workflows/run-log.js";
import { runSandboxed } from "../../src/workflows/sandbox/sandbox.js";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wfpipe");

// biome-ignore lint/suspicious/noExplicitAny: test code reads records loosely
const eventsOf = (dir: string): any[] =>
  fs
    .readFileSync(path.join(dir, "events.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

/** Where in the log a call settled. */
const settledAt = (events: { type: string; stepId?: string }[], id: string): number =>
  events.findIndex((e) => e.type === "step_settled" && e.stepId === id);

/**
 * A gate the first items' stage-1 children wait on. It opens when the last item's stage-2 child (call agent-4)
 * has settled — which only a streaming pipeline reaches while the others still wait — or after 20 s, so a
 * batching pipeline fails the order checks below instead of hanging.
 */
function gateAfterAgent4(name: string) {
  const gate = path.join(sb.cwd, name);
  const open = (): void => fs.writeFileSync(gate, "open");
  const fallback = setTimeout(open, 20_000);
  const onProgress = (p: CodeProgress): void => {
    if (p.type === "agent_settled" && p.result.id === "agent-4") open();
  };
  return { mock: `mock: gate=${encodeURIComponent(gate)}`, onProgress, done: () => clearTimeout(fallback) };
}

describe("ctx.pipeline and ctx.phase", () => {
  it("streams items through stages (the last item finishes both stages while the first still waits), results in item order, a failed child flows on as a value", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const g = gateAfterAgent4("gate-trusted");
    const run = await runCodeWorkflow(
      musterHost(m),
      "pipe",
      async (ctx) => {
        ctx.phase("map");
        const out = await ctx.pipeline(
          ["a", "b", "c"],
          (item: string, i: number) =>
            ctx.agent({
              agent: "mock",
              prompt: `S1 ${item}\n${i < 2 ? g.mock : ""}\n${item === "b" ? "mock: exit=2" : ""}`,
            }),
          (r: AgentResult) =>
            r.status === "completed"
              ? ctx.agent({ agent: "mock", prompt: `S2 ${/Task: S1 (\w)/.exec(r.text ?? "")?.[1]}` })
              : `stage 1 ${r.status}`,
          (v: AgentResult | string) =>
            typeof v === "string" ? v : `${v.status}:${/Task: (.*)/.exec(v.text ?? "")?.[1]}`,
        );
        ctx.phase("reduce");
        const sum = await ctx.agent({ agent: "mock", prompt: `Sum ${out.length}` }).await();
        return { out, sum: sum.status };
      },
      "",
      { onProgress: g.onProgress },
    ).finally(g.done);
    expect(run.status, run.error).toBe("completed");
    expect(run.result).toEqual({
      out: ["completed:S2 a", "stage 1 errored", "completed:S2 c"],
      sum: "completed",
    });
    const events = eventsOf(run.dir);
    const started = events.filter((e) => e.type === "step_started");
    // Stage 2 of item c (agent-4) ran to its end before stage 1 of items a and b settled.
    expect(started.find((e) => e.stepId === "agent-4").agent).toBe("mock");
    expect(settledAt(events, "agent-4")).toBeLessThan(settledAt(events, "agent-1"));
    expect(settledAt(events, "agent-4")).toBeLessThan(settledAt(events, "agent-2"));
    expect(run.steps.find((a) => a.id === "agent-2")?.status).toBe("errored");

    // Phases: in the log in order, on each step that started in them, and the latest one in the status.
    expect(events.filter((e) => e.type === "phase").map((e) => e.name)).toEqual(["map", "reduce"]);
    const phaseOf = (id: string) => started.find((e) => e.stepId === id)?.phase;
    expect(["agent-1", "agent-4", "agent-6"].map(phaseOf)).toEqual(["map", "map", "reduce"]);
    const view = readRun(m.paths.dir, run.runId);
    expect(view.phase).toBe("reduce");
    expect(view.steps.find((s) => s.id === "agent-6")?.phase).toBe("reduce");
    const human = await sb.run(["workflow", "status", run.runId]);
    expect(human.stdout).toMatch(/^phase\s+reduce$/m);
  });

  it("the same pipeline and phase inside the QuickJS sandbox", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const g = gateAfterAgent4("gate-sandbox");
    const program = [
      `ctx.phase("fan");`,
      `const out = await ctx.pipeline(["a", "b", "c"],`,
      `  (item, i) => ctx.agent({ agent: "mock", prompt: "S1 " + item + "\\n" + (i < 2 ? ${JSON.stringify(g.mock)} : "") }),`,
      `  (r) => ctx.agent({ agent: "mock", prompt: "S2 " + /Task: S1 (\\w)/.exec(r.text)[1] }),`,
      `  (r) => r.status + ":" + /Task: (.*)/.exec(r.text)[1]);`,
      `ctx.phase("done");`,
      `return out;`,
    ].join("\n");
    const run = await runSandboxed(program, "", musterHost(m), { onProgress: g.onProgress }).finally(g.done);
    expect(run.status, run.error).toBe("completed");
    expect(run.result).toEqual(["completed:S2 a", "completed:S2 b", "completed:S2 c"]);
    const events = eventsOf(run.dir);
    expect(settledAt(events, "agent-4")).toBeLessThan(settledAt(events, "agent-1"));
    expect(settledAt(events, "agent-4")).toBeLessThan(settledAt(events, "agent-2"));
    expect(events.filter((e) => e.type === "phase").map((e) => e.name)).toEqual(["fan", "done"]);
    expect(readRun(m.paths.dir, run.runId).phase).toBe("done");

    // From the CLI: the phase is a progress line; a phase without a name is the program's error.
    fs.writeFileSync(path.join(sb.cwd, "phases.js"), `ctx.phase("only");\nreturn 1;`);
    const r = await sb.run(["workflow", "run", "phases.js", "--sandbox"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^muster: phase only$/m);
    fs.writeFileSync(path.join(sb.cwd, "nophase.js"), `ctx.phase("  ");\nreturn 1;`);
    const bad = await sb.run(["workflow", "run", "nophase.js", "--sandbox"]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/failed: the program threw TypeError: ctx.phase needs a name/);
  });
});
