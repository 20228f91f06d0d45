import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadProfile, parseProfile } from "../../src/profiles/index.js";
import { world as makeWorld, md, tempBase } from "./profile-world.js";

const BASE = tempBase("muster-frontmatter-");
const world = () => makeWorld(BASE);

describe("frontmatter", () => {
  it("no frontmatter: the whole file is the system prompt", () => {
    const p = parseProfile("/a/plain.md", "Just a prompt.\n\nTwo paragraphs.\n");
    expect(p).toMatchObject({
      name: "plain",
      description: "",
      runner: "mock",
      systemPrompt: "Just a prompt.\n\nTwo paragraphs.",
    });
    expect(p.warnings).toEqual([]);
  });

  it("reads every muster field", () => {
    const p = parseProfile(
      "/a/full.md",
      md(
        [
          "name: full",
          "description: Everything",
          "runner: command",
          "model: mock:deep",
          "reasoning: High",
          "tools: [read, grep]",
          "mode: tui",
          "cwd: sub/dir",
          "env: { A: x, DEBUG: 1, ON: true }",
          "maxTurns: 7",
          "command: [./run.sh, '{prompt}']",
          "protocol: muster-jsonl",
          "unknownField: whatever",
          "isolation: worktree",
        ].join("\n"),
      ),
    );
    expect(p).toMatchObject({
      name: "full",
      runner: "command",
      model: "mock:deep",
      reasoning: "high",
      tools: ["read", "grep"],
      mode: "tui",
      cwd: "sub/dir",
      env: { A: "x", DEBUG: "1", ON: "true" },
      maxTurns: 7,
      command: ["./run.sh", "{prompt}"],
      protocol: "muster-jsonl",
    });
    expect(p.warnings).toEqual([]);
    expect(parseProfile("/a/t.md", md("tools: Read, Grep,  Bash ")).tools).toEqual(["Read", "Grep", "Bash"]);
  });

  it("a wrong type for any field is one warning naming the file and field; the rest still works", () => {
    const wrong: [string, string][] = [
      ["name", "name: [a]"],
      ["description", "description: 12"],
      ["runner", "runner: {x: 1}"],
      ["model", "model: 42"],
      ["model", "model: claude sonnet 4"],
      ["reasoning", "reasoning: [high]"],
      ["tools", "tools: {read: true}"],
      ["tools", "tools: [read, 3]"],
      ["mode", "mode: interactive"],
      ["cwd", "cwd: 5"],
      ["env", "env: [A]"],
      ["env.B", "env: {A: ok, B: [x]}"],
      ["env.1X", "env: {1X: nope}"],
      ["maxTurns", "maxTurns: 0"],
      ["maxTurns", "maxTurns: 2.5"],
      ["maxTurns", 'maxTurns: "3"'],
      ["command", "command: run.sh"],
      ["protocol", "protocol: xml"],
    ];
    for (const [field, line] of wrong) {
      const base = field === "description" ? "runner: mock" : "description: ok";
      const p = parseProfile("/x/agents/w.md", md(`${base}\n${line}`, "Still here."));
      expect(p.warnings, line).toEqual([expect.stringContaining(`/x/agents/w.md: field "${field}"`)]);
      expect(p.systemPrompt).toBe("Still here.");
      if (field !== "description") expect(p.description).toBe("ok");
    }
    expect(parseProfile("/x/w.md", md("env: {A: ok, B: [x]}")).env).toEqual({ A: "ok" });
  });

  it("bad YAML: the file is skipped with a warning, other profiles load, loading its name says why", () => {
    const w = world();
    const broken = w.project("broken.md", "---\ndescription: [unclosed\n---\nBody\n");
    w.project("fine.md", md("description: fine"));
    const found = w.discover();
    expect(found.profiles.map((p) => p.name)).toContain("fine");
    expect(found.profiles.map((p) => p.name)).not.toContain("broken");
    expect(found.warnings).toEqual(
      expect.arrayContaining([expect.stringMatching(new RegExp(`${broken}.*broken frontmatter.*skipped`))]),
    );
    // Twice: gray-matter's own cache would hide the error the second time.
    for (let i = 0; i < 2; i++)
      expect(() => loadProfile("broken", w.cwd, w.env, { config: {} })).toThrow(
        expect.objectContaining({
          code: "invalid_config",
          message: expect.stringMatching(/^agent "broken": .*broken frontmatter/),
        }),
      );
    // A broken override of a bundled name is an error too, not a silent fallback to the bundled file.
    w.project("reviewer.md", "---\nmodel: : :\n---\n");
    expect(() => loadProfile("reviewer", w.cwd, w.env, { config: {} })).toThrow(/broken frontmatter/);
  });

  it("frontmatter that is not a map, or JavaScript, is broken (never evaluated)", () => {
    expect(() => parseProfile("/a/s.md", "---\njust a string\n---\nx")).toThrow(/broken frontmatter/);
    expect(() => parseProfile("/a/l.md", "---\n- a\n- b\n---\nx")).toThrow(/broken frontmatter/);
    const marker = path.join(BASE, "evaluated");
    const js = `---js\n{ x: require("fs").writeFileSync(${JSON.stringify(marker)}, "1") }\n---\nx`;
    expect(() => parseProfile("/a/j.md", js)).toThrow(/broken frontmatter/);
    expect(fs.existsSync(marker)).toBe(false);
    expect(parseProfile("/a/e.md", "---\n---\nBody").systemPrompt).toBe("Body");
  });
});
