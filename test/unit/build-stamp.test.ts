// `npm install` / `npm link` run `prepare`: it builds only when dist/ is missing or not the build of the current
// sources, and so do `npm test` and `npm run bench`; `npm run build` always builds. Checked on small real trees in
// temp folders, and by running the real script there.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inputsHash, OUTPUTS, STAMP, staleReason, writeStamp } from "../../scripts/build-stamp.mjs";

const REPO = path.resolve(import.meta.dirname, "../..");
const made: string[] = [];
afterEach(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A project tree: sources, settings, every output file, and (unless stamped: false) a stamp of this build. */
function project(opts: { stamped?: boolean } = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-stamp-"));
  made.push(root);
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write("src/a.ts", "export const a = 1;\n");
  write("src/cli/b.ts", "export const b = 2;\n");
  write("tsconfig.json", "{}\n");
  write("package.json", '{"name":"x"}\n');
  for (const f of OUTPUTS) write(f, "// built\n");
  // The real prepare script, which is itself one of the build's inputs.
  for (const f of ["build.mjs", "build-stamp.mjs"])
    write(`scripts/${f}`, fs.readFileSync(path.join(REPO, "scripts", f), "utf8"));
  if (opts.stamped !== false) writeStamp(root, inputsHash(root));
  return root;
}

const prepare = (root: string) =>
  spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--if-stale"], {
    cwd: root,
    encoding: "utf8",
  });

describe("build stamp", () => {
  it("a fresh clone (no dist/) needs a build; so does a dist/ without a stamp", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-stamp-"));
    made.push(root);
    fs.mkdirSync(path.join(root, "src"));
    fs.writeFileSync(path.join(root, "src", "a.ts"), "1");
    expect(staleReason(root)).toBe("dist/ is missing");
    expect(staleReason(project({ stamped: false }))).toBe("dist/ has no build stamp");
  });

  it("up to date after a build; touched but unchanged files keep it so", () => {
    const root = project();
    expect(staleReason(root)).toBeNull();
    const later = new Date(Date.now() + 60_000);
    for (const f of ["src/a.ts", "tsconfig.json", "package.json"])
      fs.utimesSync(path.join(root, f), later, later);
    expect(staleReason(root)).toBeNull();
  });

  it("a changed, added or removed source, or changed settings, needs a build", () => {
    for (const change of [
      (r: string) => fs.appendFileSync(path.join(r, "src/cli/b.ts"), "// edit\n"),
      (r: string) => fs.writeFileSync(path.join(r, "src/new.ts"), "export {};\n"),
      (r: string) => fs.rmSync(path.join(r, "src/a.ts")),
      (r: string) => fs.writeFileSync(path.join(r, "tsconfig.json"), '{"compilerOptions":{}}\n'),
      (r: string) => fs.writeFileSync(path.join(r, "package-lock.json"), "{}\n"),
    ]) {
      const root = project();
      change(root);
      expect(staleReason(root)).toBe("the sources changed since the last build");
    }
  });

  it("a missing output (dist/ half cleaned) needs a build", () => {
    const root = project();
    fs.rmSync(path.join(root, "dist/child/host.bundle.js"));
    expect(staleReason(root)).toBe("dist/child/host.bundle.js is missing");
  });
});

describe("prepare (npm install, npm link) and build", () => {
  it("package.json: prepare, test and bench build only when stale; build always builds", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
    expect(pkg.scripts.prepare).toBe("node scripts/build.mjs --if-stale");
    expect(pkg.scripts.build).toBe("node scripts/build.mjs");
    expect(pkg.scripts.bench).toMatch(/^node scripts\/build\.mjs --if-stale && /);
    expect(fs.readFileSync(path.join(REPO, "scripts", "test.mjs"), "utf8")).toContain(
      '[path.join(root, "scripts", "build.mjs"), "--if-stale"]',
    );
  });

  it("the real script: up to date → nothing built, dist/ untouched; stale → it starts a build", () => {
    const root = project();
    const before = fs.statSync(path.join(root, STAMP)).mtimeMs;
    const fresh = prepare(root);
    expect(fresh.status, fresh.stderr).toBe(0);
    expect(fresh.stderr).toMatch(/dist\/ is up to date with src\/, nothing to build/);
    expect(fs.statSync(path.join(root, STAMP)).mtimeMs).toBe(before);

    fs.appendFileSync(path.join(root, "src/a.ts"), "// edit\n");
    // This tree has no TypeScript in node_modules: the build it starts fails, and leaves the stamp as it was.
    const stale = prepare(root);
    expect(stale.stderr).toContain("muster: building dist/ (the sources changed since the last build)");
    expect(stale.status).not.toBe(0);
    expect(staleReason(root)).toBe("the sources changed since the last build");
  });
});
