// A TOML workflow (and a code or sandboxed one) whose step fails on a provider's quota (the mock agent's `mock: provider=quota`) pauses
// with its tree: finished steps stand, nothing else starts, the run shows as paused; resume-tree continues
// the paused step on the same child (its conversation kept) and the run goes on from there. A runner that
// dies while paused is resumed (`workflow resume`) from its last finished step too.
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, readEvents, until, useSandbox } from "../helpers/cli.js";
import { runInBackground } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfpause");

// biome-ignore lint/suspicious/noExplicitAny: loosely read CLI output
type Json = any;

const write = (rel: string, text: string): string => {
  const file = path.join(sb.cwd, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
};

const step = (id: string, prompt: string, needs: string[] = []) =>
  `[[steps]]\nid = "${id}"\nagent = "mock"\nprompt = """${prompt}"""\n${needs.length ? `needs = ${JSON.stringify(needs)}\n` : ""}`;

/** A child's artifact dir (one primary in this sandbox). */
const artifactDirOf = (id: string): string => {
  const primaries = path.join(sb.home, "primaries");
  return path.join(primaries, fs.readdirSync(primaries)[0]!, "artifacts", id);
};

/** The run of `workflow` once `workflow runs` shows it paused. */
function whenPaused(workflow: string): Promise<Json> {
  let last: unknown;
  return until(async () => {
    const runs = (await sb.json(["workflow", "runs"])).data.runs;
    const r = runs.find((x: { workflow: string }) => x.workflow === workflow);
    last = r;
    return r?.status === "paused" ? r : undefined;
  }, 45_000).catch((e: Error) => {
    throw new Error(`${e.message}: ${workflow} not paused; last seen ${JSON.stringify(last)}`);
  });
}

const flow = (name: string, gate: string) =>
  write(
    `flows/${name}.toml`,
    `name = "${name}"\n${step("a", "A.")}${step("b", `B.\nmock: provider=quota provider-unless=${encodeURIComponent(gate)}`, ["a"])}${step("c", "C.", ["b"])}`,
  );

describe("a workflow pauses with its tree and continues from its last finished step", () => {
  it("resume-tree continues the paused step on the same child; the run completes", async () => {
    const gate = path.join(sb.cwd, "quota-restored-1");
    const runner = runInBackground(sb, flow("paused-flow", gate), true);
    const run = await whenPaused("paused-flow");
    expect(run.steps.map((s: Json) => s.status)).toEqual(["completed", "paused", "pending"]);
    expect(run.steps[1].reason).toContain("paused (quota)");
    expect((await sb.json(["ls"])).data.treePaused).toMatchObject({ kind: "quota" });
    const bChild = run.steps[1].childId as string;

    fs.writeFileSync(gate, "");
    expect((await sb.json(["resume-tree"])).data.resumed).toMatchObject({ kind: "quota", child: bChild });
    const done = await runner;
    expect(done.exitCode, String(done.stderr)).toBe(0);
    const r = JSON.parse(String(done.stdout));
    expect(r.status).toBe("completed");
    expect(r.steps.map((s: Json) => s.status)).toEqual(["completed", "completed", "completed"]);
    // The same child ran the step again: two turns in one conversation, the first refused.
    expect(r.steps[1].childId).toBe(bChild);
    const completions = readEvents(artifactDirOf(bChild))
      .filter((e) => e.type === "completion")
      .map((e) => e.status);
    expect(completions).toEqual(["errored", "completed"]);
    const events = fs
      .readFileSync(path.join(r.dir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.filter((e) => e.type === "step_paused")).toHaveLength(1);
    expect(events.filter((e) => e.type === "step_continued")).toHaveLength(1);
    // c started only after b was continued and completed.
    const at = (t: string, id: string) => events.findIndex((e) => e.type === t && e.stepId === id);
    expect(at("step_started", "c")).toBeGreaterThan(at("step_continued", "b"));
  });

  it("a runner killed while paused: workflow resume keeps the finished step and goes on after resume-tree", async () => {
    const gate = path.join(sb.cwd, "quota-restored-2");
    const runner = runInBackground(sb, flow("killed-flow", gate));
    const run = await whenPaused("killed-flow");
    const refused = await sb.json(["workflow", "resume", run.runId]);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr).toContain("paused with its tree");
    runner.kill("SIGKILL");
    await runner;
    expect((await sb.json(["workflow", "status", run.runId])).data.status).toBe("interrupted");
    fs.writeFileSync(gate, "");
    expect((await sb.json(["resume-tree"])).exitCode).toBe(0);
    const r = await sb.json(["workflow", "resume", run.runId]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.steps.map((s: Json) => s.status)).toEqual(["completed", "completed", "completed"]);
    // a kept its result (not run again); b went on with its own child.
    expect(r.data.steps[0].childId).toBe(run.steps[0].childId);
    expect(r.data.steps[1].childId).toBe(run.steps[1].childId);
  });
  it("a code workflow's call, and a sandboxed program's, pause with the tree and go on after resume-tree", async () => {
    const body = (gate: string) =>
      `const a = await ctx.agent({ agent: "mock", prompt: "A." }).await();\n` +
      `const b = await ctx.agent({ agent: "mock", prompt: "B.\\nmock: provider=quota provider-unless=${encodeURIComponent(gate)}" }).await();\n` +
      `return a.status + " then " + b.status;\n`;
    const cases = [
      {
        file: "flows/code-pause.mjs",
        text: (g: string) => `export default async (ctx) => {\n${body(g)}};\n`,
        sandbox: false,
      },
      { file: "flows/sandbox-pause.js", text: body, sandbox: true },
    ];
    for (const [i, c] of cases.entries()) {
      const gate = path.join(sb.cwd, `quota-restored-code-${i}`);
      const file = write(c.file, c.text(gate));
      const runner = execa(
        process.execPath,
        [BIN, "workflow", "run", file, ...(c.sandbox ? ["--sandbox"] : [])],
        {
          cwd: sb.cwd,
          env: sb.env,
          extendEnv: false,
          reject: false,
          stdin: "ignore",
        },
      );
      let last: unknown;
      const run = await until(async () => {
        const runs = (await sb.json(["workflow", "runs"])).data.runs as Json[];
        last = runs;
        return runs.find(
          (r) => r.status === "paused" && r.workflow === path.basename(c.file).replace(/\.m?js$/, ""),
        );
      }, 45_000).catch((e: Error) => {
        throw new Error(`${e.message}: ${c.file} not paused; runs: ${JSON.stringify(last).slice(-1500)}`);
      });
      const paused = run.steps.find((s: Json) => s.status === "paused");
      expect(paused.reason).toContain("paused (quota)");
      fs.writeFileSync(gate, "");
      expect((await sb.json(["resume-tree"])).data.resumed).toMatchObject({
        kind: "quota",
        child: paused.childId,
      });
      const done = await runner;
      expect(done.exitCode, String(done.stderr)).toBe(0);
      expect(String(done.stdout)).toContain("completed then completed");
      const events = readEvents(artifactDirOf(paused.childId));
      // The same child ran the call again: the first turn refused, the second completed.
      expect(events.filter((e) => e.type === "completion").map((e) => e.status)).toEqual([
        "errored",
        "completed",
      ]);
    }
  }, 120_000);
});
