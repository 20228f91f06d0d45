import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MusterError } from "../../src/core/errors.js";
import { discoverWorkflows, loadWorkflow } from "../../src/workflows/discover.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A project folder and a private user config folder. */
function world() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-wfd-"));
  dirs.push(root);
  const cwd = path.join(root, "project");
  const config = path.join(root, "config");
  fs.mkdirSync(cwd, { recursive: true });
  const env = { HOME: path.join(root, "home"), XDG_CONFIG_HOME: config };
  const user = path.join(config, "muster", "workflows");
  const project = path.join(cwd, ".muster", "workflows");
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
    return file;
  };
  return { cwd, env, user, project, write };
}

const wf = (name: string, prompt = "p") =>
  `name = "${name}"\ndescription = "${prompt}"\n[[steps]]\nid = "a"\nagent = "mock"\nprompt = "${prompt}"\n`;

describe("workflow discovery", () => {
  it("finds user and project workflows recursively; project shadows user by name and list shows the winner", () => {
    const w = world();
    const userFile = w.write(path.join(w.user, "deep", "nested", "x.toml"), wf("shared", "from user"));
    w.write(path.join(w.user, "only-user.toml"), wf("only-user"));
    const projFile = w.write(path.join(w.project, "other-file-name.toml"), wf("shared", "from project"));
    w.write(path.join(w.project, ".hidden", "h.toml"), wf("hidden"));
    w.write(path.join(w.project, "notes.md"), "not a workflow");
    const d = discoverWorkflows(w.cwd, w.env);
    const names = d.workflows.map((x) => x.name);
    expect(names).toContain("shared");
    expect(names).toContain("only-user");
    expect(names).not.toContain("hidden");
    const shared = d.workflows.find((x) => x.name === "shared")!;
    expect(shared).toMatchObject({ layer: "project", source: projFile, description: "from project" });
    expect(shared.shadows).toEqual([{ source: userFile, layer: "user" }]);
    expect(loadWorkflow("shared", w.cwd, w.env).source).toBe(projFile);
    expect(d.dirs.map((x) => x.layer)).toEqual(["bundled", "user", "project"]);
  });

  it("a broken file is a warning in the list, and an error when its name is asked for", () => {
    const w = world();
    w.write(path.join(w.user, "fine.toml"), wf("fine"));
    const brokenFile = w.write(path.join(w.project, "fine.toml"), 'name = "fine"\n[[steps]\nid = 1\n');
    const d = discoverWorkflows(w.cwd, w.env);
    expect(d.workflows.find((x) => x.name === "fine")?.layer).toBe("user");
    expect(d.warnings.join("\n")).toContain(`${brokenFile}:2:`);
    expect(() => loadWorkflow("fine", w.cwd, w.env)).toThrow(/invalid TOML/);
  });

  it("loads a file by path; unknown and invalid names are refused", () => {
    const w = world();
    const file = w.write(path.join(w.cwd, "flows", "mine.toml"), wf("mine"));
    expect(loadWorkflow("flows/mine.toml", w.cwd, w.env).source).toBe(file);
    expect(() => loadWorkflow("nope", w.cwd, w.env)).toThrow(/unknown workflow "nope"/);
    expect(() => loadWorkflow("a b", w.cwd, w.env)).toThrow(MusterError);
    expect(() => loadWorkflow("missing/x.toml", w.cwd, w.env)).toThrow(/cannot read/);
  });
});
