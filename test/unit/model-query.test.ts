import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { MusterConfig } from "../../src/config/config.js";
import { queryModels } from "../../src/profiles/index.js";
import { tempBase } from "./profile-world.js";

const BASE = tempBase("muster-query-");
const ENV: NodeJS.ProcessEnv = { HOME: path.join(BASE, "home"), XDG_CONFIG_HOME: path.join(BASE, "xdg") };
const usage = (message: RegExp) =>
  expect.objectContaining({ code: "invalid_argument", message: expect.stringMatching(message) });

describe("bounded catalog queries", () => {
  const many: MusterConfig = {
    models: Array.from({ length: 30 }, (_, i) => ({ runner: "mock", id: `extra-${i}`, reasoning: ["none"] })),
  };
  const q = (query: Parameters<typeof queryModels>[0], config: MusterConfig = {}) =>
    queryModels(query, { cwd: BASE, env: ENV, config });

  it("no question: current defaults with their sources, runners and counts, never the list", () => {
    const a = q({}, many);
    if (a.kind !== "defaults") throw new Error(a.kind);
    expect(a.defaults).toEqual({
      agent: "mock",
      runner: "mock",
      model: "mock:default",
      modelSource: "runner",
      reasoning: "none",
      reasoningSource: "runner",
    });
    expect(a.runners).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ runner: "mock", provider: "mock", open: false, models: 33 }),
        expect.objectContaining({ runner: "command", open: true, models: 0 }),
      ]),
    );
    expect(a.providers).toEqual(
      expect.arrayContaining([{ provider: "mock", models: 33, runners: ["mock"] }]),
    );
    expect(JSON.stringify(a)).not.toContain("extra-1");
  });

  it("search: at most `limit` matches, with total and more", () => {
    const def = q({ query: "extra" }, many);
    expect(def).toMatchObject({ kind: "search", total: 30, more: true, limit: 10 });
    if (def.kind !== "search") throw new Error();
    expect(def.matches).toHaveLength(10);
    expect(q({ query: "EXTRA-2", limit: 50 }, many)).toMatchObject({ total: 11, more: false });
    expect(q({ provider: "mock", limit: 3 }, many)).toMatchObject({ total: 33, more: true });
    expect(q({ provider: "mock", query: "deep" })).toMatchObject({
      total: 1,
      more: false,
      matches: [
        {
          id: "mock:deep",
          runner: "mock",
          reasoning: ["low", "medium", "high", "xhigh"],
          defaultReasoning: "medium",
        },
      ],
    });
    for (const limit of [0, 51, 2.5]) expect(() => q({ query: "x", limit })).toThrow(usage(/limit must be/));
    expect(() => q({ provider: "nobody" })).toThrow(
      usage(/unknown provider "nobody"; known: .*command.*mock/),
    );
  });

  it("one model: its runner and reasoning levels, or close matches", () => {
    expect(q({ model: "deep" })).toMatchObject({
      kind: "model",
      id: "mock:deep",
      runner: "mock",
      runners: ["mock"],
      reasoning: ["low", "medium", "high", "xhigh"],
      defaultReasoning: "medium",
    });
    expect(() => q({ model: "mock:defualt" })).toThrow(
      expect.objectContaining({
        code: "not_found",
        message: expect.stringContaining("close matches: mock:default"),
      }),
    );
    expect(() => q({ model: "x", agent: "y" })).toThrow(usage(/one thing at a time/));
  });

  it("one agent: its effective model and reasoning and where each came from", () => {
    const cwd = path.join(BASE, "proj");
    fs.mkdirSync(path.join(cwd, ".muster", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(cwd, ".muster", "agents", "fast.md"),
      "---\nrunner: mock\nmodel: fast\n---\nGo.\n",
    );
    const a = queryModels({ agent: "fast" }, { cwd, env: { ...ENV, MUSTER_REASONING: "none" }, config: {} });
    expect(a).toMatchObject({
      kind: "agent",
      agent: "fast",
      runner: "mock",
      runnerAvailable: true,
      model: "mock:fast",
      modelSource: "profile",
      reasoning: "none",
      reasoningSource: "env",
      validReasoning: ["none"],
    });
    expect(() => queryModels({ agent: "missing" }, { cwd, env: ENV, config: {} })).toThrow(/unknown agent/);
  });
});
