import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

// The real binary with a fake HOME and XDG_CONFIG_HOME inside the sandbox: the real home is never read.
const sb = useSandbox("mt-agents");
const fakeHome = path.join(path.dirname(sb.cwd), "fakehome");
const xdg = path.join(fakeHome, ".config");
const ENV = {
  HOME: fakeHome,
  XDG_CONFIG_HOME: xdg,
  MUSTER_MODEL: "",
  MUSTER_REASONING: "",
  MUSTER_COMPAT_AGENTS: "",
};

function put(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

async function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = await sb.run(args, { env: { ...ENV, ...env } });
  // biome-ignore lint/suspicious/noExplicitAny: parsed CLI output
  let data: any;
  if (args.includes("--json")) {
    try {
      data = JSON.parse(r.stdout);
    } catch {
      throw new Error(`not one JSON document (exit ${r.exitCode}): ${r.stdout} / ${r.stderr}`);
    }
  }
  return { ...r, data };
}

const project = put(
  path.join(sb.cwd, ".muster", "agents", "reviewer.md"),
  "---\ndescription: project reviewer\nrunner: mock\nmodel: deep\nreasoning: high\nmaxTurns: nope\n---\nReview hard.\n",
);
const userFile = put(
  path.join(xdg, "muster", "agents", "team", "reviewer.md"),
  "---\ndescription: user reviewer\n---\nx\n",
);
const claudeFile = put(
  path.join(fakeHome, ".claude", "agents", "cc-helper.md"),
  "---\nname: cc-helper\ndescription: from Claude Code\ntools: Read, Grep\nmodel: haiku\n---\nHelp.\n",
);
put(path.join(sb.cwd, ".muster", "agents", "broken.md"), "---\ndescription: [oops\n---\nx\n");

describe("muster agents", () => {
  it("lists winners with layer, source and shadows; warnings only on stderr and in the warnings array", async () => {
    const r = await cli(["agents", "--json"]);
    expect(r.exitCode).toBe(0);
    const by = Object.fromEntries(r.data.agents.map((a: { name: string }) => [a.name, a]));
    expect(by.reviewer).toMatchObject({
      description: "project reviewer",
      runner: "mock",
      model: "deep",
      layer: "project",
      source: project,
      shadows: [
        { layer: "user", source: userFile },
        { layer: "bundled", source: expect.stringMatching(/agents[/\\]reviewer\.md$/) },
      ],
    });
    expect(by.reviewer.systemPrompt).toBeUndefined();
    expect(by["cc-helper"]).toMatchObject({
      runner: "claude",
      model: "anthropic:haiku",
      layer: "compat-user",
      source: claudeFile,
    });
    for (const name of ["explorer", "planner", "worker", "mock", "command", "demo-explore"])
      expect(by[name]).toBeDefined();
    expect(by.broken).toBeUndefined();
    expect(r.data.compat).toBe(true);
    expect(r.data.warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining('field "maxTurns"'),
        expect.stringMatching(/broken\.md has broken frontmatter/),
      ]),
    );
    const warnLines = r.stderr.trim().split("\n");
    expect(warnLines.length).toBe(r.data.warnings.length);
    for (const l of warnLines) expect(l).toMatch(/^muster: warning: /);
  });

  it("--no-compat and MUSTER_COMPAT_AGENTS=0 hide other harnesses' folders", async () => {
    for (const [args, env] of [
      [["agents", "--json", "--no-compat"], {}],
      [["agents", "--json"], { MUSTER_COMPAT_AGENTS: "0" }],
    ] as const) {
      const r = await cli([...args], env);
      expect(r.data.compat).toBe(false);
      expect(r.data.agents.map((a: { name: string }) => a.name)).not.toContain("cc-helper");
    }
  });

  it("shows one profile in full, and a table for people", async () => {
    const one = await cli(["agents", "reviewer", "--json"]);
    expect(one.exitCode).toBe(0);
    expect(one.data.agent).toMatchObject({
      name: "reviewer",
      systemPrompt: "Review hard.",
      reasoning: "high",
      format: "muster",
    });
    expect(one.data.agent.shadows).toHaveLength(2);
    expect(one.data.warnings).toEqual([expect.stringContaining(`${project}: field "maxTurns"`)]);
    const text = await cli(["agents", "reviewer"]);
    expect(text.stdout).toMatch(/^name +reviewer$/m);
    expect(text.stdout).toMatch(/^shadows +user /m);
    expect(text.stdout.trim().endsWith("Review hard.")).toBe(true);
    const table = await cli(["agents"]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^NAME +RUNNER +READY +MODEL +LAYER +SHADOWS +SOURCE +DESCRIPTION$/,
    );
    expect(table.stdout).toMatch(
      /^reviewer +mock +yes +deep +project +user,bundled +\.\/\.muster\/agents\/reviewer\.md/m,
    );
  });

  it("bad names and broken files are one-line usage errors (exit 2)", async () => {
    const broken = await cli(["agents", "broken", "--json"]);
    expect(broken.exitCode).toBe(2);
    expect(broken.data.error).toEqual({
      code: "invalid_config",
      message: expect.stringMatching(/^agent "broken": .*broken frontmatter/),
    });
    const missing = await cli(["agents", "nope"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/^muster: unknown agent "nope"; available: /);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
    expect((await cli(["agents", "../x"])).exitCode).toBe(2);
  });
});

describe("muster models", () => {
  it("no question: defaults with sources, runner counts", async () => {
    const r = await cli(["models", "--json"], { MUSTER_REASONING: "high" });
    expect(r.exitCode).toBe(0);
    expect(r.data.defaults).toMatchObject({
      model: "mock:default",
      modelSource: "runner",
      reasoning: "high",
      reasoningSource: "env",
    });
    expect(r.data.runners).toEqual(
      expect.arrayContaining([expect.objectContaining({ runner: "mock", models: 3 })]),
    );
    expect(r.data.matches).toBeUndefined();
  });

  it("search is bounded with total and more; config models count", async () => {
    put(
      path.join(xdg, "muster", "config.json"),
      JSON.stringify({
        models: Array.from({ length: 12 }, (_, i) => ({
          runner: "mock",
          id: `big-${i}`,
          reasoning: ["none"],
        })),
      }),
    );
    try {
      const r = await cli(["models", "--query", "big", "--json"]);
      expect(r.data).toMatchObject({ kind: "search", total: 12, more: true, limit: 10 });
      expect(r.data.matches).toHaveLength(10);
      const r2 = await cli(["models", "--provider", "mock", "--limit", "20", "--json"]);
      expect(r2.data).toMatchObject({ total: 15, more: false });
      const human = await cli(["models", "--query", "big", "--limit", "2"]);
      expect(human.stdout).toMatch(/2 of 12 shown/);
    } finally {
      fs.rmSync(path.join(xdg, "muster", "config.json"));
    }
  });

  it("--model and --agent answer one thing", async () => {
    const m = await cli(["models", "--model", "mock:deep", "--json"]);
    expect(m.data).toMatchObject({
      id: "mock:deep",
      runner: "mock",
      reasoning: ["low", "medium", "high", "xhigh"],
      defaultReasoning: "medium",
    });
    const a = await cli(["models", "--agent", "reviewer", "--json"], { MUSTER_MODEL: "mock:fast" });
    expect(a.data).toMatchObject({
      model: "mock:deep",
      modelSource: "profile",
      reasoning: "high",
      reasoningSource: "profile",
    });
    const e = await cli(["models", "--agent", "explorer", "--json"], { MUSTER_MODEL: "mock:fast" });
    expect(e.data).toMatchObject({
      model: "mock:fast",
      modelSource: "env",
      reasoning: "none",
      reasoningSource: "runner",
    });
  });

  it("bad input: exit 2, one line, close matches", async () => {
    const cases: [string[], RegExp][] = [
      [["models", "--limit", "0"], /--limit must be a whole number from 1 to 50/],
      [["models", "--limit", "51"], /--limit must be/],
      [["models", "--model", "mock:dep"], /unknown model "mock:dep"; close matches: mock:deep/],
      [["models", "--provider", "nobody"], /unknown provider "nobody"/],
      [["models", "--model", "x", "--query", "y"], /one thing at a time/],
      [["models", "--agent", "nope"], /unknown agent "nope"/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    const json = await cli(["models", "--model", "nope:x", "--json"]);
    expect(json.data.error.code).toBe("not_found");
  });

  it("every option has help text", async () => {
    for (const cmd of ["agents", "models"]) {
      const r = await cli([cmd, "--help"]);
      expect(r.exitCode).toBe(0);
      for (const line of r.stdout.split("\n").filter((l) => /^\s+--?[a-z]/.test(l)))
        expect(line.trim().split(/\s{2,}/).length, line).toBeGreaterThanOrEqual(2);
    }
  });
});
