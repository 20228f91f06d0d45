import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { primaryPaths } from "../../src/artifacts/layout.js";
import { createMuster } from "../../src/core/muster.js";
import { sessionFileOf } from "../../src/sessions/store.js";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mt-core-api-")));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A core over an empty state root, in an empty working directory (no tmux is touched by these calls). */
function core() {
  const base = tmp();
  const home = path.join(base, "state");
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd);
  const env = { PATH: process.env.PATH, HOME: base, XDG_CONFIG_HOME: path.join(base, "config") };
  return { m: createMuster({ home, cwd, env }), home };
}

describe("the core API a front end uses", () => {
  it("one policy for agent-or-resume: each conflicting start is named as data and creates nothing", async () => {
    const { m, home } = core();
    expect(m.startConflict({ agent: "mock" })).toBeUndefined();
    expect(m.startConflict({ resume: "abc" })).toBeUndefined();
    expect(m.startConflict({ agent: "mock", resume: "abc" })).toBe("agent_and_resume");
    expect(m.startConflict({ resume: "abc", group: "g" })).toBe("group_with_resume");
    expect(m.startConflict({ resume: "abc", backend: "tmux" })).toBe("backend_with_resume");
    expect(m.startConflict({ resume: "abc", cwd: "/" })).toBe("resume_with_command_or_cwd");
    expect(m.startConflict({ resume: "abc", command: ["true"] })).toBe("resume_with_command_or_cwd");
    expect(m.startConflict({ agent: "mock", seal: true })).toBe("seal_without_group");
    expect(m.startConflict({ agent: "mock", group: "g", seal: true })).toBeUndefined();
    await expect(m.start({ prompt: "x", agent: "mock", resume: "abc" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    expect(fs.existsSync(home)).toBe(false);
  });

  it("agents, one agent, models and doctor come back as plain data", async () => {
    const { m } = core();
    const list = m.agents({ compat: false });
    const mock = list.agents.find((a) => a.profile.name === "mock");
    expect(mock?.profile.runner).toBe("mock");
    expect(mock?.readiness).toEqual({ ready: true });
    expect(list.searched.length).toBeGreaterThan(0);
    expect(m.agent("mock").profile.layer).toBe(mock?.profile.layer);
    expect(m.models({}).kind).toBe("defaults");
    expect(m.models({ agent: "mock" }).kind).toBe("agent");
    const report = await m.doctor();
    expect(report.runners.map((r) => r.name)).toContain("mock");
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it("attach names the child it cannot attach to", () => {
    const { m } = core();
    expect(() => m.attach("0123abcd")).toThrow(/0123abcd/);
  });
});

describe("the on-disk layout", () => {
  it("a child's conversation, the budget and the slots are found from its artifact dir alone", () => {
    const root = tmp();
    const p = primaryPaths(root, "01900000-0000-7000-8000-000000000001");
    const child = "01900000-0000-7000-8000-000000000002";
    expect(sessionFileOf(p.artifactDir(child))).toBe(p.sessionFile(child));
    expect(p.sessionFile(child)).toBe(path.join(p.dir, "subagents", `${child}.jsonl`));
    expect(p.budget).toBe(path.join(p.dir, "budget.json"));
    expect(p.slots).toBe(path.join(p.dir, "slots"));
  });
});
