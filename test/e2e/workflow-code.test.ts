import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { type AgentResult, runCodeWorkflow } from "../../src/workflows/code/code.js";
import { musterHost } from "../../src/workflows/host.js";
import { readRun } from "../../src/workflows/run-log.js";
import { useSandbox } from "../helpers/cli.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfcode");

const eventsOf = (dir: string) =>
  fs
    .readFileSync(path.join(dir, "events.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("code workflows (ctx.agent, await, parallel) on real children", () => {
  it("awaits a callback's child, fans out over its output, and ctx.await all returns results in input order", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "fan-out",
      async (ctx, input) => {
        const split = await ctx
          .agent({ agent: "mock", prompt: `Split: ${input}\nmock: reply=pear,apple,fig` })
          .await();
        const items = (split.text ?? "").split(",");
        // The first item's child is the slowest: "all" still answers in the order the handles were given.
        const jobs = items.map((item, i) =>
          ctx.agent({ agent: "mock", prompt: `Process ${item}\n${i === 0 ? "mock: sleep=2" : ""}` }),
        );
        const results = await ctx.await(jobs, "all");
        return results.map((r) => `${r.status}:${/Task: (.*)/.exec(r.text ?? "")?.[1]}`);
      },
      "three fruits",
    );
    expect(run.status).toBe("completed");
    expect(run.result).toEqual([
      "completed:Process pear",
      "completed:Process apple",
      "completed:Process fig",
    ]);
    expect(run.steps.map((a) => a.id)).toEqual(["agent-1", "agent-2", "agent-3", "agent-4"]);
    expect(JSON.parse(fs.readFileSync(path.join(run.dir, "result.json"), "utf8"))).toEqual(run.result);
    const view = readRun(m.paths.dir, run.runId);
    expect(view.status).toBe("completed");
    expect(view.steps.map((s) => s.status)).toEqual(["completed", "completed", "completed", "completed"]);
  });

  it('ctx.await "first" gives the first settled result and the open handles; a failed child is a value, not a throw', async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "first",
      async (ctx) => {
        const slow = ctx.agent({ agent: "mock", prompt: "Slow.\nmock: sleep=3" });
        const failing = ctx.agent({ agent: "mock", prompt: "Fail.\nmock: exit=2" });
        const { result, rest } = await ctx.await([slow, failing], "first");
        const others = await ctx.await(rest, "all");
        const nobody = await ctx.agent({ agent: "no-such-agent", prompt: "x" }).await();
        return {
          first: [result.id, result.status],
          rest: others.map((r) => [r.id, r.status]),
          nobody: nobody.status,
        };
      },
      "",
    );
    expect(run.status).toBe("completed");
    expect(run.result).toEqual({
      first: ["agent-2", "errored"],
      rest: [["agent-1", "completed"]],
      nobody: "errored",
    });
    expect(run.steps[2]!.reason).toMatch(/could not start: unknown agent "no-such-agent"/);
  });

  it("ctx.parallel keeps at most `limit` children running and answers in item order; a throw fails the run", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "limited",
      async (ctx) =>
        ctx.parallel(
          ["a", "b", "c", "d"],
          async (item, i) => {
            const r: AgentResult = await ctx
              .agent({
                agent: "mock",
                prompt: `Item ${item}\n${i === 0 ? "mock: sleep=1.5" : "mock: sleep=0.5"}`,
              })
              .await();
            return `${item}:${r.status}`;
          },
          { limit: 2 },
        ),
      "",
    );
    expect(run.result).toEqual(["a:completed", "b:completed", "c:completed", "d:completed"]);
    let open = 0;
    let most = 0;
    for (const e of eventsOf(run.dir)) {
      if (e.type === "step_started") most = Math.max(most, ++open);
      if (e.type === "step_settled") open--;
    }
    expect(most).toBe(2);

    const boom = await runCodeWorkflow(
      musterHost(m),
      "throws",
      async () => {
        throw new Error("the workflow gave up");
      },
      "",
    );
    expect(boom).toMatchObject({ status: "failed", error: "the workflow gave up" });

    const before = (await m.list()).length;
    const capped = await runCodeWorkflow(
      musterHost(m),
      "capped",
      async (ctx) =>
        ctx.await(
          [1, 2, 3].map((n) => ctx.agent({ agent: "mock", prompt: `n${n}` })),
          "all",
        ),
      "",
      { maxAgents: 1 },
    );
    expect((capped.result as AgentResult[]).map((r) => r.status)).toEqual([
      "completed",
      "errored",
      "errored",
    ]);
    expect((capped.result as AgentResult[])[2]!.reason).toBe("the run's cap of 1 children is reached");
    expect((await m.list()).length - before).toBe(1);
    expect(readRun(m.paths.dir, boom.runId).status).toBe("failed");
  });

  it("muster workflow run <file.mjs> runs a module's default workflow and prints what it returns", async () => {
    const file = path.join(sb.cwd, "flows", "echo.mjs");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `export default async (ctx, input) => {\n  const r = await ctx.agent({ agent: "mock", prompt: "Echo " + input }).await();\n  ctx.log("got " + r.status);\n  return r.text;\n};\n`,
    );
    const r = await sb.run(["workflow", "run", "flows/echo.mjs", "hello"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^# mock answer\n\nTask: Echo hello\n/);
    expect(r.stderr).toMatch(/agent-1 started: child [0-9a-f]{8} \(mock\)/);
    expect(r.stderr).toMatch(/got completed/);
    fs.writeFileSync(path.join(sb.cwd, "flows", "bad.mjs"), "export default 42;\n");
    const bad = await sb.run(["workflow", "run", "flows/bad.mjs"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/default export must be workflow/);
  });

  it("muster workflow cancel stops a code workflow's run: its running child is cancelled, the run exits 3", async () => {
    const file = path.join(sb.cwd, "flows", "hang.mjs");
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      `export default async (ctx) => {\n  const r = await ctx.agent({ agent: "mock", prompt: "Hang.\\nmock: hang" }).await();\n  return r.status;\n};\n`,
    );
    const runner = runInBackground(sb, file, true);
    const running = await whenStepRunning(sb, "hang");
    const c = await sb.json(["workflow", "cancel", running.runId]);
    expect(c.data.status).toBe("cancelled");
    const done = await runner;
    expect(done.exitCode).toBe(3);
    const out = JSON.parse(String(done.stdout));
    expect(out).toMatchObject({ status: "cancelled", result: "cancelled" });
    expect((await sb.json(["status", running.steps[0].childId])).data.status).toBe("closed");
  });
});
