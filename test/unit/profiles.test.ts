import * as path from "node:path";
import { describe, expect, it } from "vitest";
import {
  bundledProfileNames,
  claudeModel,
  discoverProfiles,
  loadProfile,
  parseProfile,
  piModel,
} from "../../src/profiles/index.js";
import { world as makeWorld, md, tempBase } from "./profile-world.js";

const BASE = tempBase("muster-profiles-");
const world = () => makeWorld(BASE);

describe("profile discovery", () => {
  it("finds the bundled profiles, including the new explorer/reviewer/planner/worker", () => {
    const w = world();
    const names = w.discover().profiles.map((p) => p.name);
    for (const b of ["mock", "command", "demo-explore", "explorer", "reviewer", "planner", "worker"])
      expect(names).toContain(b);
    expect(bundledProfileNames()).toEqual(expect.arrayContaining(["explorer", "worker", "mock"]));
    const explorer = w.discover().profiles.find((p) => p.name === "explorer")!;
    expect(explorer).toMatchObject({ runner: "mock", layer: "bundled", shadows: [] });
    expect(explorer.systemPrompt).toMatch(/file:line|FILE:LINE|path\/to\/file/i);
    expect(explorer.systemPrompt).toMatch(/did not find/);
  });

  it("project shadows user shadows compat shadows bundled, and records what each winner shadows", () => {
    const w = world();
    const claude = w.write(
      path.join(w.home, ".claude", "agents", "reviewer.md"),
      md("description: from claude"),
    );
    const user = w.user("reviewer.md", md("description: from user\nrunner: mock"));
    const project = w.project("reviewer.md", md("description: from project\nrunner: mock"));
    const found = w.discover();
    const r = found.profiles.find((p) => p.name === "reviewer")!;
    expect(r).toMatchObject({ description: "from project", layer: "project", source: project });
    expect(r.shadows.map((s) => [s.layer, s.source])).toEqual([
      ["user", user],
      ["compat-user", claude],
      ["bundled", expect.stringMatching(/agents[/\\]reviewer\.md$/)],
    ]);
    expect(loadProfile("reviewer", w.cwd, w.env, { config: {} }).description).toBe("from project");
  });

  it("a user profile shadows the bundled one and compat project folders beat compat home folders", () => {
    const w = world();
    w.user("mock.md", md("description: my mock\nrunner: mock"));
    w.write(path.join(w.home, ".claude", "agents", "x.md"), md("description: home claude"));
    w.write(path.join(w.home, ".pi", "agent", "agents", "x.md"), md("description: home pi"));
    w.write(path.join(w.cwd, ".claude", "agents", "x.md"), md("description: project claude"));
    w.write(path.join(w.cwd, ".opencode", "agents", "x.md"), md("description: project opencode"));
    const found = w.discover();
    expect(found.profiles.find((p) => p.name === "mock")).toMatchObject({
      layer: "user",
      description: "my mock",
    });
    const x = found.profiles.find((p) => p.name === "x")!;
    expect(x).toMatchObject({ description: "project opencode", layer: "compat-project", runner: "opencode" });
    expect(x.shadows.map((s) => s.layer)).toEqual(["compat-project", "compat-user", "compat-user"]);
  });

  it("the compat layer can be switched off by option, env and config", () => {
    const w = world();
    w.write(path.join(w.cwd, ".claude", "agents", "cc.md"), md("name: cc\ndescription: claude agent"));
    const has = (d: ReturnType<typeof w.discover>) => d.profiles.some((p) => p.name === "cc");
    expect(has(w.discover())).toBe(true);
    expect(has(w.discover(false))).toBe(false);
    const off = discoverProfiles({ cwd: w.cwd, env: { ...w.env, MUSTER_COMPAT_AGENTS: "0" }, config: {} });
    expect(off.compat).toBe(false);
    expect(has(off)).toBe(false);
    expect(has(discoverProfiles({ cwd: w.cwd, env: w.env, config: { compatAgents: false } }))).toBe(false);
    // The config file itself is read from the fake XDG_CONFIG_HOME when no config is passed.
    w.write(path.join(w.xdg, "muster", "config.json"), JSON.stringify({ compatAgents: false }));
    expect(has(discoverProfiles({ cwd: w.cwd, env: w.env }))).toBe(false);
    expect(() => loadProfile("cc", w.cwd, w.env)).toThrow(/unknown agent "cc"/);
    expect(loadProfile("cc", w.cwd, w.env, { compat: true }).runner).toBe("claude");
  });

  it("discovers recursively, names by frontmatter or file stem, skips invalid names with a warning", () => {
    const w = world();
    w.project("team/backend/db-expert.md", md("description: nested"));
    w.project("team/renamed.md", md("name: fancy\ndescription: renamed"));
    const bad = w.project("bad name.md", md("description: spaces in the stem"));
    const bad2 = w.project("ok.md", md("name: ../evil\ndescription: bad name field"));
    const found = w.discover();
    const names = found.profiles.map((p) => p.name);
    expect(names).toEqual(expect.arrayContaining(["db-expert", "fancy"]));
    expect(names).not.toContain("renamed");
    expect(names).not.toContain("ok");
    expect(found.warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining(`${bad}: agent name "bad name" is not valid; skipped`),
        expect.stringContaining(`${bad2}: agent name "../evil" is not valid`),
      ]),
    );
    expect(names).toEqual([...names].sort());
  });

  it("two files in one folder with the same name: the shallower wins, with a warning", () => {
    const w = world();
    const top = w.project("dup.md", md("description: top"));
    const deep = w.project("sub/dup.md", md("description: deep"));
    const found = w.discover();
    const d = found.profiles.find((p) => p.name === "dup")!;
    expect(d.source).toBe(top);
    expect(d.shadows).toEqual([{ source: deep, layer: "project" }]);
    expect(found.warnings.some((x) => x.includes(deep) && x.includes(top))).toBe(true);
  });

  it("unknown agents are not_found and list what exists", () => {
    const w = world();
    expect(() => loadProfile("nope", w.cwd, w.env, { config: {} })).toThrow(
      expect.objectContaining({ code: "not_found", message: expect.stringMatching(/available: .*explorer/) }),
    );
    expect(() => loadProfile("../x", w.cwd, w.env)).toThrow(/invalid agent name/);
  });
});

describe("compat mapping", () => {
  it("Claude Code: runner claude, model aliases and full ids, tools from a comma string", () => {
    const p = parseProfile(
      "/h/.claude/agents/rev.md",
      md(
        "name: rev\ndescription: Reviews\ntools: Read, Grep, Bash\nmodel: sonnet\ncolor: blue\ndisallowedTools: Write",
      ),
      "claude",
    );
    expect(p).toMatchObject({
      name: "rev",
      runner: "claude",
      model: "anthropic:sonnet",
      tools: ["Read", "Grep", "Bash"],
      disallowedTools: ["Write"],
      format: "claude",
    });
    expect(claudeModel("opus")).toBe("anthropic:opus");
    expect(claudeModel("claude-opus-4-1-20250805")).toBe("anthropic:claude-opus-4-1-20250805");
    expect(claudeModel("inherit")).toBeNull();
    expect(parseProfile("/c/i.md", md("description: d\nmodel: inherit"), "claude").model).toBeUndefined();
    const odd = parseProfile("/c/o.md", md("description: d\nmodel: gpt-5"), "claude");
    expect(odd.model).toBeUndefined();
    expect(odd.warnings).toEqual([
      expect.stringMatching(/\/c\/o\.md: field "model" "gpt-5" has no known Claude Code translation/),
    ]);
  });

  it("Pi: provider/model or a known bare id, thinking → reasoning", () => {
    const p = parseProfile(
      "/h/.pi/agent/agents/s.md",
      md(
        "name: scout\ndescription: recon\nmodel: anthropic/claude-haiku-4-5\nthinking: high\ntools: read, grep",
      ),
      "pi",
    );
    expect(p).toMatchObject({
      runner: "pi",
      model: "anthropic:claude-haiku-4-5",
      reasoning: "high",
      tools: ["read", "grep"],
    });
    expect(piModel("claude-haiku-4-5")).toEqual({ model: "anthropic:claude-haiku-4-5" });
    expect(piModel("google/gemini-2.5-pro:low")).toEqual({ model: "google:gemini-2.5-pro", thinking: "low" });
    expect(piModel("gpt-5:off")).toEqual({ model: "openai:gpt-5", thinking: "off" });
    expect(parseProfile("/p/o.md", md("description: d\nthinking: off"), "pi").reasoning).toBe("none");
    const unknown = parseProfile("/p/u.md", md("description: d\nmodel: mystery-model\nthinking: huge"), "pi");
    expect(unknown.model).toBeUndefined();
    expect(unknown.reasoning).toBeUndefined();
    expect(unknown.warnings).toEqual([
      expect.stringContaining('"mystery-model" has no known Pi translation'),
      expect.stringContaining('field "thinking"'),
    ]);
  });

  it("OpenCode: provider/model, tools map, reasoningEffort, maxSteps", () => {
    const p = parseProfile(
      "/p/.opencode/agents/doc.md",
      md(
        "description: Docs\nmode: subagent\nmodel: openrouter/anthropic/claude-3.5-sonnet\nreasoningEffort: HIGH\nmaxSteps: 12\ntools:\n  write: false\n  edit: false\n  read: true",
      ),
      "opencode",
    );
    expect(p).toMatchObject({
      name: "doc",
      runner: "opencode",
      model: "openrouter:anthropic/claude-3.5-sonnet",
      reasoning: "high",
      maxTurns: 12,
      tools: ["read"],
      disallowedTools: ["write", "edit"],
    });
    expect(p.mode).toBeUndefined(); // OpenCode's mode (primary|subagent) is not muster's mode
    expect(parseProfile("/p/e.md", md("description: d\neffort: low"), "opencode").reasoning).toBe("low");
    expect(parseProfile("/p/m.md", md("description: d\nmodel: sonnet"), "opencode").warnings).toEqual([
      expect.stringContaining("no known OpenCode translation"),
    ]);
  });

  it("compat folders skip files without a description (READMEs live there too)", () => {
    const w = world();
    w.write(path.join(w.home, ".claude", "agents", "README.md"), "# My agents\n");
    w.write(path.join(w.cwd, ".pi", "agents", "real.md"), md("description: real one\nmodel: openai/gpt-5"));
    const names = w.discover().profiles.map((p) => p.name);
    expect(names).not.toContain("README");
    expect(w.discover().profiles.find((p) => p.name === "real")).toMatchObject({
      runner: "pi",
      model: "openai:gpt-5",
    });
  });
});
