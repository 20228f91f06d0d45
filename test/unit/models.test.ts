import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { MusterConfig } from "../../src/config/config.js";
import { choices, resolveResumeSettings, resolveSettings, runnerCatalog } from "../../src/profiles/index.js";
import { tempBase } from "./profile-world.js";

const BASE = tempBase("muster-models-");
// A fake HOME with no config file: nothing from the real home can leak in.
const ENV: NodeJS.ProcessEnv = { HOME: path.join(BASE, "home"), XDG_CONFIG_HOME: path.join(BASE, "xdg") };

const resolve = (over: Partial<Parameters<typeof resolveSettings>[0]> = {}) =>
  resolveSettings({ runner: "mock", env: ENV, config: {}, ...over });
const usage = (message: RegExp) =>
  expect.objectContaining({ code: "invalid_argument", message: expect.stringMatching(message) });

describe("new child: model and reasoning resolve independently (call ?? profile ?? primary)", () => {
  it("falls back to the runner's default model and that model's default reasoning", () => {
    expect(resolve()).toMatchObject({
      model: "mock:default",
      reasoning: "none",
      sources: { model: "runner", reasoning: "runner" },
      validReasoning: ["none", "low", "medium", "high"],
      warnings: [],
    });
    // The default reasoning follows the resolved model, not the runner's default model.
    expect(resolve({ config: { model: "mock:deep" } })).toMatchObject({
      model: "mock:deep",
      reasoning: "medium",
    });
  });

  it("each level beats the one below it: call > profile > env > config > runner", () => {
    const config: MusterConfig = { model: "mock:fast", reasoning: "none" };
    const env = { ...ENV, MUSTER_MODEL: "mock:default", MUSTER_REASONING: "low" };
    const profile = { model: "mock:deep", reasoning: "high", source: "/p/x.md" };
    const call = { model: "mock:default", reasoning: "medium" };
    expect(resolve({ config })).toMatchObject({
      model: "mock:fast",
      reasoning: "none",
      sources: { model: "config", reasoning: "config" },
    });
    expect(resolve({ config, env })).toMatchObject({
      model: "mock:default",
      reasoning: "low",
      sources: { model: "env", reasoning: "env" },
    });
    expect(resolve({ config, env, profile })).toMatchObject({
      model: "mock:deep",
      reasoning: "high",
      sources: { model: "profile", reasoning: "profile" },
    });
    expect(resolve({ config, env, profile, call })).toMatchObject({
      model: "mock:default",
      reasoning: "medium",
      sources: { model: "call", reasoning: "call" },
    });
  });

  it("model and reasoning come from different levels when only one is given at a level", () => {
    const env = { ...ENV, MUSTER_REASONING: "high" };
    expect(resolve({ env, call: { model: "mock:deep" } })).toMatchObject({
      model: "mock:deep",
      reasoning: "high",
      sources: { model: "call", reasoning: "env" },
    });
    expect(resolve({ profile: { model: "mock:deep" }, call: { reasoning: "xhigh" } })).toMatchObject({
      model: "mock:deep",
      reasoning: "xhigh",
      sources: { model: "profile", reasoning: "call" },
    });
    expect(resolve({ profile: { reasoning: "low" }, config: { model: "mock:deep" } })).toMatchObject({
      model: "mock:deep",
      reasoning: "low",
      sources: { model: "config", reasoning: "profile" },
    });
  });

  it("normalises spellings to the catalog id", () => {
    for (const s of ["mock:deep", "deep", "MOCK:Deep", "mock/deep", " deep "])
      expect(resolve({ call: { model: s } }).model, s).toBe("mock:deep");
    expect(resolve({ call: { reasoning: "HIGH" } }).reasoning).toBe("high");
  });

  it("invalid explicit values are usage errors that list the valid choices", () => {
    expect(() => resolve({ call: { model: "mock:turbo" } })).toThrow(
      usage(/^unknown mock model "mock:turbo"; choose one of: .*mock:deep.*mock:default.*mock:fast/),
    );
    expect(() => resolve({ call: { model: "gpt 5" } })).toThrow(usage(/not a model spelling/));
    expect(() => resolve({ call: { model: "mock:fast", reasoning: "high" } })).toThrow(
      usage(/^reasoning "high" is not valid for model mock:fast; choose one of: none$/),
    );
    expect(() => resolve({ call: { model: "mock:deep", reasoning: "none" } })).toThrow(
      usage(/choose one of: .*high.*low.*medium.*xhigh/),
    );
    // A profile's unknown model for a closed catalog, or a level its model cannot take, also fails (naming the file).
    expect(() => resolve({ profile: { model: "mock:turbo", source: "/p/r.md" } })).toThrow(
      usage(/\(profile \/p\/r\.md\)/),
    );
    expect(() => resolve({ profile: { reasoning: "xhigh", source: "/p/r.md" } })).toThrow(
      usage(/reasoning "xhigh" \(profile \/p\/r\.md\) is not valid for model mock:default/),
    );
  });

  it("a profile's bad model spelling warns and inherits the primary's model", () => {
    const s = resolve({
      profile: { model: "Claude Sonnet 4", source: "/p/r.md" },
      env: { ...ENV, MUSTER_MODEL: "mock:deep" },
    });
    expect(s).toMatchObject({ model: "mock:deep", sources: { model: "env" } });
    expect(s.warnings).toEqual([
      expect.stringMatching(/^profile \/p\/r\.md: model "Claude Sonnet 4" is not a model spelling/),
    ]);
  });

  it("primary defaults that do not fit this runner or model are passed over with a warning", () => {
    const env = { ...ENV, MUSTER_MODEL: "anthropic:sonnet", MUSTER_REASONING: "xhigh" };
    const s = resolve({ env });
    expect(s).toMatchObject({
      model: "mock:default",
      reasoning: "none",
      sources: { model: "runner", reasoning: "runner" },
    });
    expect(s.warnings).toEqual([
      expect.stringContaining('MUSTER_MODEL: "anthropic:sonnet" is not a mock model'),
      expect.stringContaining('MUSTER_REASONING: reasoning "xhigh" is not valid for model mock:default'),
    ]);
    // …and the next primary level still applies.
    expect(resolve({ env, config: { model: "mock:fast" } })).toMatchObject({
      model: "mock:fast",
      sources: { model: "config" },
    });
  });

  it("an open catalog accepts any spelling as given; a runner named only in config is open", () => {
    expect(resolve({ runner: "command", call: { model: "whatever/x-1", reasoning: "max" } })).toMatchObject({
      model: "whatever/x-1",
      reasoning: "max",
      sources: { model: "call", reasoning: "call" },
    });
    expect(resolve({ runner: "command" })).toMatchObject({ sources: { model: null, reasoning: null } });
    expect(resolve({ runner: "command" }).model).toBeUndefined();
    expect(runnerCatalog("nosuch", {})).toMatchObject({ open: true, available: false, models: [] });
  });

  it("config `models` entries add to a runner's catalog; bad entries warn", () => {
    const config = {
      models: [
        { runner: "mock", id: "turbo", reasoning: ["low", "max"], defaultReasoning: "max" },
        { runner: "mock", id: "bad id" },
        { id: "no-runner" },
      ],
    } as MusterConfig;
    const s = resolve({ config, call: { model: "turbo" } });
    expect(s).toMatchObject({ model: "mock:turbo", reasoning: "max", validReasoning: ["low", "max"] });
    expect(s.warnings).toEqual([
      expect.stringContaining('config "models"[1]'),
      expect.stringContaining('config "models"[2]'),
    ]);
  });

  it("lists of choices are bounded, closest first", () => {
    const many = Array.from({ length: 25 }, (_, i) => `p:model-${String(i).padStart(2, "0")}`);
    expect(choices(many)).toMatch(/^p:model-00, .*p:model-09, …and 15 more$/);
    expect(choices(many, "p:model-17").startsWith("p:model-17")).toBe(true);
    const config = { models: many.map((id) => ({ runner: "mock", id: id.replace("p:", "") })) };
    expect(() => resolve({ config, call: { model: "nope" } })).toThrow(usage(/…and 18 more/));
  });
});

describe("resume: omitted overrides keep the last values, explicit ones win", () => {
  const last = { model: "mock:deep", reasoning: "xhigh" };
  const resume = (call: { model?: string; reasoning?: string }, l = last) =>
    resolveResumeSettings({ runner: "mock", call, last: l, env: ENV, config: {} });

  it("keeps both when nothing is given, even if the primary's defaults changed", () => {
    expect(
      resolveResumeSettings({
        runner: "mock",
        call: {},
        last,
        env: { ...ENV, MUSTER_MODEL: "mock:fast" },
        config: {},
      }),
    ).toMatchObject({
      model: "mock:deep",
      reasoning: "xhigh",
      sources: { model: "last", reasoning: "last" },
    });
  });

  it("changes only what is given", () => {
    expect(resume({ reasoning: "low" })).toMatchObject({
      model: "mock:deep",
      reasoning: "low",
      sources: { model: "last", reasoning: "call" },
    });
    expect(resume({ model: "mock:default" })).toMatchObject({
      model: "mock:default",
      sources: { model: "call" },
    });
    expect(resume({ model: "default", reasoning: "high" })).toMatchObject({
      model: "mock:default",
      reasoning: "high",
    });
  });

  it("a new model that cannot take the last level uses its default level, with a warning", () => {
    const s = resume({ model: "mock:fast" });
    expect(s).toMatchObject({ model: "mock:fast", reasoning: "none", sources: { reasoning: "runner" } });
    expect(s.warnings).toEqual([
      expect.stringContaining('the last turn: reasoning "xhigh" is not valid for model mock:fast'),
    ]);
    expect(resume({ model: "mock:default" }, { model: "mock:deep", reasoning: "high" }).reasoning).toBe(
      "high",
    );
  });

  it("explicit values are validated", () => {
    expect(() => resume({ model: "mock:nope" })).toThrow(usage(/unknown mock model/));
    expect(() => resume({ reasoning: "none" })).toThrow(
      usage(/not valid for model mock:deep; choose one of/),
    );
    expect(() => resume({ model: "mock:fast", reasoning: "low" })).toThrow(usage(/choose one of: none/));
  });
});
