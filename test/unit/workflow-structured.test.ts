import { describe, expect, it } from "vitest";
import { checkAnswer, compileOutput, extractJson } from "../../src/workflows/structured.js";

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
});
