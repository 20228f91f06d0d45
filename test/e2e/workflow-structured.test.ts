import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { runCodeWorkflow } from "../../src/workflows/code/code.js";
import { runWorkflow } from "../../src/workflows/dag/run.js";
import { parseWorkflow } from "../../src/workflows/dag/toml.js";
import { musterHost } from "../../src/workflows/host.js";
import { useSandbox } from "../helpers/cli.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfstruct");

const FILES = {
  description: "the files to review",
  schema: {
    type: "object",
    properties: { files: { type: "array", items: { type: "string" }, minItems: 1 } },
    required: ["files"],
    additionalProperties: false,
  },
};
// The mock answers with `reply=` on its first turn and `reply2=` on a later one (URI-encoded: no spaces).
const reply = (first: string, then?: string): string =>
  `mock: reply=${encodeURIComponent(first)}${then !== undefined ? ` reply2=${encodeURIComponent(then)}` : ""}`;

const runEvents = (dir: string) =>
  fs
    .readFileSync(path.join(dir, "events.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("structured one-shot workers (ctx.agent with output) on real children", () => {
  it("a valid answer (prose around a ```json block) is decoded into result.output; the child is closed after", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const answer = 'Here it is:\n```json\n{"files": ["a.ts", "b.ts"]}\n```\nDone.';
    const run = await runCodeWorkflow(
      musterHost(m),
      "valid",
      async (ctx) =>
        ctx.agent({ agent: "mock", prompt: `List files.\n${reply(answer)}`, output: FILES }).await(),
      "",
    );
    expect(run.status).toBe("completed");
    const r = run.steps[0]!;
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({ files: ["a.ts", "b.ts"] });
    // The format was instructed in the child's prompt; one-shot: no retry, and the child no longer runs.
    const child = m.child(r.childId!);
    const prompts = fs.readdirSync(child.files.prompts);
    expect(prompts).toHaveLength(1);
    expect(fs.readFileSync(path.join(child.files.prompts, prompts[0]!), "utf8")).toContain('"minItems": 1');
    expect(["closed", "lost"]).toContain((await m.reconcile(child)).status);
    await expect(m.send(r.childId!, "more?")).rejects.toThrow(/exited|lost/);
  });

  it("an invalid answer gets one corrective turn carrying the validation errors; the corrected answer is decoded", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "retry",
      async (ctx) =>
        ctx
          .agent({
            agent: "mock",
            prompt: `List files.\n${reply('{"files":[],"extra":1}', '```json\n{"files":["c.ts"]}\n```')}`,
            output: FILES,
          })
          .await(),
      "",
    );
    const r = run.steps[0]!;
    expect(r.status).toBe("completed");
    expect(r.output).toEqual({ files: ["c.ts"] });
    const retried = runEvents(run.dir).find((e) => e.type === "step_retried");
    expect(retried).toMatchObject({ stepId: "agent-1" });
    const second = fs.readFileSync(
      path.join(m.child(r.childId!).files.prompts, `${retried.turnId}.txt`),
      "utf8",
    );
    expect(second).toContain("/files must NOT have fewer than 1 items");
    expect(second).toContain("the value must NOT have additional properties (extra)");
  });

  it("an answer invalid twice is a result value with the errors, not a throw; prose without JSON too", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "invalid",
      async (ctx) => {
        const bad = ctx.agent({
          agent: "mock",
          prompt: `A.\n${reply('{"files":"x"}', '{"files":"x"}')}`,
          output: FILES,
        });
        const prose = ctx.agent({ agent: "mock", prompt: `B.\n${reply("no json here")}`, output: FILES });
        const results = await ctx.await([bad, prose]);
        return results.map((x) => ({ status: x.status, errors: x.errors, has: "output" in x }));
      },
      "",
    );
    expect(run.status).toBe("completed");
    expect(run.result).toEqual([
      { status: "errored", errors: ["/files must be array"], has: false },
      { status: "errored", errors: [expect.stringMatching(/holds no JSON value/)], has: false },
    ]);
    expect(run.steps[0]!.reason).toMatch(/did not match the output schema/);
  });

  it("a bad schema is refused before any child starts", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const before = Object.keys(m.registry.read().children).length;
    const run = await runCodeWorkflow(
      musterHost(m),
      "bad-schema",
      async (ctx) =>
        ctx
          .agent({
            agent: "mock",
            prompt: "x",
            output: { schema: { type: "object", properties: { a: { type: "no-such-type" } } } },
          })
          .await(),
      "",
    );
    expect(run.status).toBe("failed");
    expect(run.error).toMatch(/output schema is not valid/);
    expect(run.steps).toEqual([]);
    expect(Object.keys(m.registry.read().children)).toHaveLength(before);
  });

  it("output drives a fan-out: a structured step lists files, one child per file", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const run = await runCodeWorkflow(
      musterHost(m),
      "fan-out",
      async (ctx, input) => {
        const list = await ctx
          .agent({
            agent: "mock",
            prompt: `Which files in ${input}?\n${reply('{"files":["x.ts","y.ts","z.ts"]}')}`,
            output: FILES,
          })
          .await();
        const files = (list.output as { files: string[] }).files;
        const done = await ctx.await(files.map((f) => ctx.agent({ agent: "mock", prompt: `Review ${f}` })));
        return done.map((d) => /Task: (.*)/.exec(d.text ?? "")?.[1]);
      },
      "src",
    );
    expect(run.status).toBe("completed");
    expect(run.result).toEqual(["Review x.ts", "Review y.ts", "Review z.ts"]);
    expect(run.steps).toHaveLength(4);
  });

  it("TOML: a step with an output table is a structured worker; its dependent receives the decoded JSON", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const toml = [
      'name = "structured"',
      "[[steps]]",
      'id = "list"',
      'agent = "mock"',
      `prompt = """List files.\n${reply("none", '{"files":["q.ts"]}')}"""`,
      `output = { description = "files", schema = '${JSON.stringify(FILES.schema)}' }`,
      "[[steps]]",
      'id = "use"',
      'agent = "mock"',
      'prompt = "Use them."',
      'needs = ["list"]',
    ].join("\n");
    const run = await runWorkflow(musterHost(m), parseWorkflow(toml, "inline"), "");
    expect(run.status).toBe("completed");
    expect(run.steps[0]).toMatchObject({ status: "completed", output: { files: ["q.ts"] } });
    const dir = m.child(run.steps[1]!.childId!).files.prompts;
    const prompt = fs.readFileSync(path.join(dir, fs.readdirSync(dir)[0]!), "utf8");
    expect(prompt).toContain('## Output of step "list"\n\n{\n  "files": [\n    "q.ts"\n  ]\n}');
    expect(runEvents(run.dir).filter((e) => e.type === "step_retried")).toHaveLength(1);
  });

  it("TOML: a bad output schema or an unknown output key refuses the workflow at parse time", () => {
    const head = 'name = "w"\n[[steps]]\nid = "a"\nagent = "mock"\nprompt = "x"\n';
    expect(() => parseWorkflow(`${head}output = { schema = { type = 3 } }`, "inline")).toThrow(
      /step "a": output schema is not valid/,
    );
    expect(() => parseWorkflow(`${head}output = { schema = "{nope" }`, "inline")).toThrow(
      /output schema is not JSON/,
    );
    expect(() => parseWorkflow(`${head}output = { shape = {} }`, "inline")).toThrow(
      /unknown output key "shape"/,
    );
  });

  it("CLI: workflow run prints a structured terminal step's decoded value, and the errors of a refused one", async () => {
    const file = path.join(sb.cwd, "structured-cli.toml");
    const schema = JSON.stringify(FILES.schema);
    const stepOf = (id: string, answer: string) =>
      `[[steps]]\nid = "${id}"\nagent = "mock"\nprompt = """Files.\n${reply(answer, answer)}"""\noutput = { schema = '${schema}' }\n`;
    fs.writeFileSync(
      file,
      `name = "sc"\n${stepOf("good", 'Sure:\n```json\n{"files":["k.ts"]}\n```')}${stepOf("bad", '{"files":3}')}`,
    );
    const r = await sb.run(["workflow", "run", file, ""]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toContain('{\n  "files": [\n    "k.ts"\n  ]\n}\n');
    expect(r.stdout).not.toContain("Sure:");
    expect(r.stdout).toMatch(/bad · mock · errored · the answer did not match the output schema/);
    expect(r.stdout).toContain("/files must be array");
    // The run's record keeps how each worker's schema was held, and why one was refused.
    const runId = (await sb.json(["workflow", "runs"])).data.runs.at(-1).runId as string;
    const st = await sb.json(["workflow", "status", runId]);
    const byId = new Map(st.data.steps.map((s: { id: string }) => [s.id, s]));
    expect(byId.get("good")).toMatchObject({ status: "completed", structured: "instructed" });
    expect(byId.get("bad")).toMatchObject({ status: "errored", structured: "instructed" });
    expect((byId.get("bad") as { errors: string[] }).errors.join("\n")).toContain("/files must be array");
    const human = await sb.run(["workflow", "status", runId]);
    expect(human.stdout).toMatch(/good\s+completed\s+[0-9a-f]{8}\s+structured \(instructed\)/);
    expect(human.stdout).toMatch(/bad\s+errored .*schema: .*\/files must be array/);
  });

  it("resume after kill -9: a completed structured step keeps its decoded output; a running one is replaced, not re-attached", async () => {
    const gate = path.join(sb.cwd, "gate-structured");
    const schema = JSON.stringify(FILES.schema);
    const file = path.join(sb.cwd, "structured-resume.toml");
    fs.writeFileSync(
      file,
      [
        'name = "sresume"',
        "[[steps]]",
        'id = "a"',
        'agent = "mock"',
        `prompt = """A.\n${reply('{"files":["a.ts"]}')}"""`,
        `output = { schema = '${schema}' }`,
        "[[steps]]",
        'id = "b"',
        'agent = "mock"',
        `prompt = """B.\n${reply('{"files":["b.ts"]}')} gate=${encodeURIComponent(gate)}"""`,
        `output = { schema = '${schema}' }`,
        'needs = ["a"]',
      ].join("\n"),
    );
    const runner = runInBackground(sb, file);
    const before = await whenStepRunning(sb, "sresume", 1);
    runner.kill("SIGKILL");
    await runner;
    fs.writeFileSync(gate, "open");
    const r = await sb.json(["workflow", "resume", before.runId]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.steps.map((s: { output: unknown }) => s.output)).toEqual([
      { files: ["a.ts"] },
      { files: ["b.ts"] },
    ]);
    expect(r.data.steps[0].childId).toBe(before.steps[0].childId);
    expect(r.data.steps[1].childId).not.toBe(before.steps[1].childId);
    expect((await sb.json(["status", before.steps[1].childId])).data.status).toBe("closed");
  });
});
