import * as os from "node:os";
import { describe, expect, it } from "vitest";
import type { StepOutcome, StepSpawn, WorkflowHost } from "../../src/workflows/host.js";
import {
  checkAnswer,
  compileOutput,
  extractJson,
  finishStructured,
  modeOf,
  structuredSpawn,
} from "../../src/workflows/structured.js";

/** A host whose "native" agent's runner enforces schemas; answers come from a queue, one per turn. */
class NativeHost implements WorkflowHost {
  readonly spawns: StepSpawn[] = [];
  readonly sent: string[] = [];
  readonly cancelled: string[] = [];
  constructor(private readonly answers: string[]) {}
  agents(): Set<string> {
    return new Set(["native", "plain"]);
  }
  nativeOutput(agent: string): boolean {
    return agent === "native";
  }
  stateDir(): string {
    return os.tmpdir();
  }
  async spawn(o: StepSpawn): Promise<{ id: string; turnId: string }> {
    this.spawns.push(o);
    return { id: "c1", turnId: "t1" };
  }
  async send(_id: string, prompt: string): Promise<{ turnId: string }> {
    this.sent.push(prompt);
    return { turnId: `t${this.sent.length + 1}` };
  }
  async wait(): Promise<StepOutcome> {
    return { status: "completed", text: this.answers.shift() ?? "" };
  }
  async cancel(ids: string[]): Promise<void> {
    this.cancelled.push(...ids);
  }
}

describe("structured output: extracting and checking the JSON value of an answer", () => {
  it("takes the last fenced block that parses, a bare fence, the whole answer, or the last line-starting value", () => {
    expect(extractJson('a\n```json\n{"n":1}\n```\nb\n```json\n{"n":2}\n```\n')).toEqual({
      ok: true,
      value: { n: 2 },
    });
    expect(extractJson('```json\n{"n":1}\n```\n```json\nnot json\n```')).toEqual({
      ok: true,
      value: { n: 1 },
    });
    expect(extractJson("```\n[1, 2]\n```")).toEqual({ ok: true, value: [1, 2] });
    expect(extractJson('  {"whole": true}  ')).toEqual({ ok: true, value: { whole: true } });
    expect(extractJson('Here you go:\n{"late": [1]}')).toEqual({ ok: true, value: { late: [1] } });
    expect(extractJson("just prose").ok).toBe(false);
  });

  it("reports each ajv error on one line, and refuses a bad spec with a one-line error", () => {
    const validate = compileOutput(
      { schema: { type: "object", properties: { n: { type: "integer" } }, required: ["n", "m"] } },
      "here",
    );
    expect(checkAnswer(validate, '{"n": "x"}')).toEqual({
      ok: false,
      errors: ["the value must have required property 'm'", "/n must be integer"],
    });
    expect(checkAnswer(validate, '{"n": 3, "m": 0}')).toEqual({ ok: true, value: { n: 3, m: 0 } });
    expect(() => compileOutput({ schema: [] }, "here")).toThrow(
      /^here: output "schema" must be a JSON Schema object$/,
    );
    expect(() => compileOutput({ schema: { minimum: "x" } }, "here")).toThrow(
      /^here: output schema is not valid:/,
    );
  });

  it("native where the agent's runner takes the schema (it travels with the spawn), instructed elsewhere; ajv checks both", async () => {
    const spec = { description: "the files", schema: { type: "object", required: ["files"] } };
    const host = new NativeHost(['{"nope": 1}', '```json\n{"files": ["a.ts"]}\n```']);
    const native = structuredSpawn(host, { agent: "native", prompt: "List them." }, spec);
    expect(native.outputSchema).toEqual(spec.schema);
    expect(native.prompt).toBe("List them.\n\nYour final answer is structured output: the files");
    expect(modeOf(native)).toBe("native");
    const plain = structuredSpawn(host, { agent: "plain", prompt: "List them." }, spec);
    expect(plain.outputSchema).toBeUndefined();
    expect(plain.prompt).toContain("Answer with one JSON value only");
    expect(modeOf(plain)).toBe("instructed");
    // A native answer that still fails ajv gets the one corrective turn (instructed: the errors and the schema).
    const child = await host.spawn(native);
    const out = await finishStructured(
      host,
      child,
      spec,
      compileOutput(spec, "here"),
      undefined,
      modeOf(native),
    );
    expect(out).toMatchObject({ status: "completed", structured: "native", output: { files: ["a.ts"] } });
    expect(host.sent).toHaveLength(1);
    expect(host.sent[0]).toContain("the value must have required property 'files'");
    expect(host.spawns[0]!.outputSchema).toEqual(spec.schema);
    expect(host.cancelled).toEqual(["c1"]);
  });
});
