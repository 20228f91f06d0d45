import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { Muster } from "../../src/core/muster.js";
import {
  claimWorkspacePrimary,
  explicitPrimary,
  resolvePrimary,
  workspaceDir,
} from "../../src/core/primary.js";
import { uuidv7 } from "../../src/util/ids.js";

const dirs: string[] = [];
const tmp = () => {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mt-primary-")));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("workspace primary resolution", () => {
  it("a .git file that is not a gitdir pointer does not make a work tree", () => {
    const base = tmp();
    const root = path.join(base, "state");
    const sub = path.join(base, "proj", "sub");
    fs.mkdirSync(sub, { recursive: true });
    fs.writeFileSync(path.join(base, "proj", ".git"), "not a pointer\n");
    expect(workspaceDir(root, sub, { HOME: base })).toBe(sub);
    fs.writeFileSync(path.join(base, "proj", ".git"), "gitdir: /elsewhere/.git/worktrees/proj\n");
    expect(workspaceDir(root, sub, { HOME: base })).toBe(path.join(base, "proj"));
  });

  it("an empty .git folder (a sandbox's mount point) does not make a work tree; one with a HEAD does", () => {
    const base = tmp();
    const root = path.join(base, "state");
    const sub = path.join(base, "proj", "sub");
    fs.mkdirSync(path.join(base, "proj", ".git"), { recursive: true });
    fs.mkdirSync(sub, { recursive: true });
    expect(workspaceDir(root, sub, { HOME: base })).toBe(sub);
    fs.writeFileSync(path.join(base, "proj", ".git", "HEAD"), "ref: refs/heads/main\n");
    expect(workspaceDir(root, sub, { HOME: base })).toBe(path.join(base, "proj"));
  });

  it("a primary made in the home directory is not inherited by directories below it", () => {
    const base = tmp();
    const root = path.join(base, "state");
    const home = path.join(base, "home");
    const below = path.join(home, "notes");
    fs.mkdirSync(below, { recursive: true });
    claimWorkspacePrimary(root, home, uuidv7());
    expect(workspaceDir(root, below, { HOME: home })).toBe(below);
    expect(workspaceDir(root, home, { HOME: home })).toBe(home);
    // Any other recorded ancestor is inherited.
    const proj = path.join(base, "proj");
    fs.mkdirSync(path.join(proj, "a", "b"), { recursive: true });
    claimWorkspacePrimary(root, proj, uuidv7());
    expect(workspaceDir(root, path.join(proj, "a", "b"), { HOME: home })).toBe(proj);
  });

  it("the first claim wins; a later one adopts it and leaves no temp file", () => {
    const base = tmp();
    const root = path.join(base, "state");
    const first = uuidv7();
    expect(claimWorkspacePrimary(root, base, first)).toBe(first);
    expect(claimWorkspacePrimary(root, base, uuidv7())).toBe(first);
    expect(fs.readdirSync(path.join(root, "workspaces"))).toHaveLength(1);
  });

  it("resolving writes nothing; a core adopts the primary another process recorded before its first write", () => {
    const base = tmp();
    const root = path.join(base, "state");
    const src = resolvePrimary(root, base, undefined, { HOME: base });
    expect(src.recorded).toBe(false);
    const m = new Muster({ home: root, cwd: base, env: { HOME: base } });
    expect(fs.existsSync(root)).toBe(false);
    const winner = claimWorkspacePrimary(root, base, uuidv7());
    expect(m.primary).not.toBe(winner);
    m.claimPrimary();
    expect(m.primary).toBe(winner);
    expect(m.paths.dir).toBe(path.join(root, "primaries", winner));
    expect(fs.statSync(m.paths.artifacts).isDirectory()).toBe(true);
  });

  it("an explicit full id is taken as given; a short id must name one existing primary", () => {
    const root = tmp();
    const id = "01a22900-0000-7000-8000-00000000cafe";
    expect(explicitPrimary(root, id.toUpperCase())).toBe(id);
    expect(() => explicitPrimary(root, "0000cafe")).toThrow(/unknown primary "0000cafe"/);
    fs.mkdirSync(path.join(root, "primaries", id), { recursive: true });
    expect(explicitPrimary(root, "0000cafe")).toBe(id);
    expect(() => explicitPrimary(root, "x/../y")).toThrow(/invalid primary id/);
  });
});
