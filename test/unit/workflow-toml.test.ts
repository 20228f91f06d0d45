import { describe, expect, it } from "vitest";
import { MusterError } from "../../src/base/errors.js";
import { checkAgents, parseWorkflow, terminalSteps } from "../../src/workflows/dag/toml.js";

const REVIEW_CHAIN = `
name = "review-chain"
description = "Inspect a change from two angles, then synthesize."

[[steps]]
id = "correctness"
agent = "reviewer"
prompt = "Review for correctness and regressions."

[[steps]]
id = "tests"
agent = "reviewer"
prompt = "Review test coverage and validation gaps."
reasoning = "high"

[[steps]]
id = "synthesis"
agent = "reviewer"
prompt = "Synthesize the findings and remove duplicates."
needs = ["correctness", "tests"]
`;

/** The one-line message a bad workflow is refused with (a MusterError "invalid_config" unless said otherwise). */
function refusal(text: string, code = "invalid_config"): string {
  try {
    parseWorkflow(text, "w.toml");
  } catch (e) {
    expect(e).toBeInstanceOf(MusterError);
    expect((e as MusterError).code).toBe(code);
    expect((e as MusterError).message).not.toContain("\n");
    return (e as MusterError).message;
  }
  throw new Error("the workflow was accepted");
}

const step = (id: string, needs: string[] = [], extra = "") =>
  `[[steps]]\nid = "${id}"\nagent = "mock"\nprompt = "do ${id}"\n${needs.length ? `needs = ${JSON.stringify(needs)}\n` : ""}${extra}`;

describe("TOML workflow parsing", () => {
  it("reads the seed's review-chain: steps in declaration order, needs, overrides, terminal steps", () => {
    const w = parseWorkflow(REVIEW_CHAIN, "review-chain.toml");
    expect(w.name).toBe("review-chain");
    expect(w.description).toMatch(/two angles/);
    expect(w.steps.map((s) => s.id)).toEqual(["correctness", "tests", "synthesis"]);
    expect(w.steps[1]).toMatchObject({ agent: "reviewer", reasoning: "high", needs: [] });
    expect(w.steps[1]!.model).toBeUndefined();
    expect(w.steps[2]!.needs).toEqual(["correctness", "tests"]);
    expect(terminalSteps(w).map((s) => s.id)).toEqual(["synthesis"]);
  });

  it("a best-of step: best_of and/or agents, a judge; its agents and judge are checked; conflicts refused", () => {
    const bo = (extra: string) => `name = "b"\n[[steps]]\nid = "impl"\nprompt = "p"\n${extra}`;
    const listed = parseWorkflow(bo('agents = ["a", "b"]\njudge = "j"\n'), "w.toml").steps[0]!;
    expect(listed).toMatchObject({ agent: "a", bestOf: { agents: ["a", "b"], judge: "j" } });
    const counted = parseWorkflow(bo('agent = "a"\nbest_of = 3\n'), "w.toml").steps[0]!;
    expect(counted).toMatchObject({ agent: "a", bestOf: { n: 3 } });
    expect(() =>
      checkAgents(parseWorkflow(bo('agents = ["a", "b"]\njudge = "j"\n'), "w.toml"), new Set(["a"])),
    ).toThrow(/unknown agent: step "impl" uses "b", step "impl" uses "j"/);
    expect(refusal(bo('agent = "a"\nbest_of = 9\n'))).toContain("a whole number from 2 to 8");
    expect(refusal(bo('agent = "a"\nagents = ["a", "b"]\n'))).toContain("not both");
    expect(refusal(bo('agents = ["a", ""]\n'))).toContain("an empty name");
    expect(refusal(bo('agent = "a"\njudge = "j"\n'))).toContain('"judge" goes with "best_of" or "agents"');
    expect(refusal(bo('agent = "a"\nbest_of = "2"\n'))).toContain('"best_of" must be a whole number');
    expect(refusal(bo('prompt2 = 1\nagents = "a"\n'))).toContain('unknown key "prompt2"');
    expect(refusal(bo('agents = "a"\n'))).toContain('"agents" must be a list of agent names');
    expect(refusal(bo('agent = "a"\nbest_of = 2\n[steps.output]\nschema = "{}"\n'))).toContain('no "output"');
  });

  it("bad TOML is refused with its line and column", () => {
    const msg = refusal('name = "x"\n\n[[steps]]\nid = "a"\nagent = mock\n');
    expect(msg).toMatch(/^workflow w\.toml:5:\d+: invalid TOML: /);
  });

  it("duplicate step ids are refused", () => {
    expect(refusal(`name = "w"\n${step("a")}${step("b")}${step("a")}`)).toMatch(/duplicate step id "a"/);
  });

  it("a need that is not a step is refused, naming both", () => {
    expect(refusal(`name = "w"\n${step("a")}${step("b", ["a", "nope"])}`)).toMatch(
      /step "b" needs "nope", which is not a step/,
    );
  });

  it("a cycle is refused and the error names it", () => {
    expect(refusal(`name = "w"\n${step("a", ["b"])}${step("b", ["a"])}`)).toMatch(
      /steps form a cycle: a → b → a$/,
    );
    // Only the cycle, not the path that led into it.
    expect(
      refusal(`name = "w"\n${step("x", ["a"])}${step("a", ["b"])}${step("b", ["c"])}${step("c", ["a"])}`),
    ).toMatch(/cycle: a → b → c → a$/);
    expect(refusal(`name = "w"\n${step("self", ["self"])}`)).toMatch(/cycle: self → self$/);
  });

  it("a diamond is not a cycle", () => {
    const w = parseWorkflow(
      `name = "w"\n${step("a")}${step("b", ["a"])}${step("c", ["a"])}${step("d", ["c", "b"])}`,
      "w.toml",
    );
    expect(terminalSteps(w).map((s) => s.id)).toEqual(["d"]);
  });

  it("missing fields, wrong types, unknown keys and bad names are refused", () => {
    expect(refusal(step("a"))).toMatch(/"name" is missing/);
    expect(refusal(`name = "w"`)).toMatch(/at least one \[\[steps\]\]/);
    expect(refusal(`name = "../etc"\n${step("a")}`)).toMatch(/name "\.\.\/etc" is not valid/);
    expect(refusal(`name = "w"\n${step("a/b")}`)).toMatch(/id "a\/b" is not valid/);
    expect(refusal(`name = "w"\n[[steps]]\nid = "a"\nprompt = "p"\n`)).toMatch(
      /step "a": "agent" is missing/,
    );
    expect(refusal(`name = "w"\n${step("a", [], "model = 3\n")}`)).toMatch(/"model" must be a string/);
    expect(refusal(`name = "w"\n${step("a", [], 'needs = "b"\n')}`)).toMatch(/"needs" must be a list/);
    expect(refusal(`name = "w"\n${step("a", [], 'agnet = "x"\n')}`)).toMatch(/unknown key "agnet"/);
    expect(refusal(`name = "w"\ntitle = "x"\n${step("a")}`)).toMatch(/unknown key "title"/);
    expect(refusal(`name = "w"\n${step("a")}${step("b", ["a", "a"])}`)).toMatch(/lists "a" twice/);
  });

  it("unknown agents are refused, naming every step that uses one", () => {
    const w = parseWorkflow(
      REVIEW_CHAIN.replace(
        /agent = "reviewer"\nprompt = "Review test/,
        'agent = "tester"\nprompt = "Review test',
      ),
      "r.toml",
    );
    expect(() => checkAgents(w, new Set(["reviewer", "tester"]))).not.toThrow();
    let err: unknown;
    try {
      checkAgents(w, new Set(["reviewer"]));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MusterError);
    expect((err as MusterError).code).toBe("not_found");
    expect((err as MusterError).message).toMatch(/unknown agent: step "tests" uses "tester"$/);
  });
});
