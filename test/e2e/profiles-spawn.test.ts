import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-prof");
const write = (rel: string, text: string) => {
  const file = path.join(sb.cwd, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

describe("profiles drive spawns", () => {
  it("a project profile's cwd, env and command are what the child runs with", async () => {
    fs.mkdirSync(path.join(sb.cwd, "sub"));
    const script = "process.stdout.write(process.cwd() + ' ' + process.env.GREETING)";
    write(
      ".muster/agents/team/envtest.md",
      `---\ndescription: prints where and with what it runs\nrunner: command\ncwd: sub\nenv:\n  GREETING: hello\ncommand: ${JSON.stringify([process.execPath, "-e", script])}\n---\n`,
    );
    const r = await sb.json(["spawn", "--agent", "envtest", "--wait", "go"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.results[0].text).toBe(`${path.join(sb.cwd, "sub")} hello`);
  });

  it("a project profile shadows the bundled one of the same name, and muster agents says so", async () => {
    write(
      ".muster/agents/planner.md",
      "---\ndescription: our own planner\nrunner: mock\nmodel: mock:fast\n---\nPlan tersely.\n",
    );
    const a = await sb.json(["agents", "planner"]);
    expect(a.data.agent).toMatchObject({
      layer: "project",
      shadows: [expect.objectContaining({ layer: "bundled" })],
    });
    expect(a.data.agent.source).toBe(path.join(sb.cwd, ".muster", "agents", "planner.md"));
    const r = await sb.json(["spawn", "--agent", "planner", "--wait", "plan it"]);
    expect(r.data.results[0].text).toContain("model: mock:fast");
  });

  it("a compat profile whose CLI is not installed, or a runner muster lacks, fails before anything starts", async () => {
    write(
      ".claude/agents/claude-reviewer.md",
      "---\nname: claude-reviewer\ndescription: reviews with Claude\nmodel: sonnet\ntools: Read, Grep\n---\nReview.\n",
    );
    const before = (await sb.json(["ls"])).data.children.length;
    const r = await sb.run(["spawn", "--agent", "claude-reviewer", "x"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/agent "claude-reviewer" runs claude, which is not installed here/);
    write(".muster/agents/odd.md", "---\ndescription: odd\nrunner: nosuch\n---\nHi.\n");
    const odd = await sb.run(["spawn", "--agent", "odd", "x"]);
    expect(odd.exitCode).toBe(2);
    expect(odd.stderr).toMatch(/runner "nosuch", which is not available yet/);
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });

  it("an invalid model or reasoning fails before any process starts, listing the valid choices", async () => {
    const before = (await sb.json(["ls"])).data.children.length;
    const m = await sb.run(["spawn", "--model", "mock:nonesuch", "x"]);
    expect(m.exitCode).toBe(2);
    expect(m.stderr).toContain("mock:default");
    const r = await sb.run(["spawn", "--model", "mock:fast", "--reasoning", "high", "x"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("none");
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });
});
