// What the build's bundles may load at run time (scripts/bundle.mjs), read from the built files: a far host's
// files (dist/remote) have no node_modules next to them, and the CLI's code-cached bundle (commands.cjs) runs as a
// vm.Script, which cannot import() by itself.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const REPO = path.resolve(import.meta.dirname, "../..");
const files = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? files(path.join(dir, e.name))
        : e.name.endsWith(".js")
          ? [path.join(dir, e.name)]
          : [],
    );
/**
 * The specifier of every `import(...)` call in code, "?" for one not written out. Read from the raw text: a call
 * named in a string would show here too, as a failure to look at, never as a pass.
 */
const importCalls = (code: string): string[] =>
  [...code.matchAll(/\bimport\(\s*(?:(["'`])([^"'`\n]*)\1\s*\))?/g)].map((m) => m[2] ?? "?");

describe("the built bundles", () => {
  it("a far host's files load no package at run time: each is self-contained but for the TUI's pty part", () => {
    const remote = path.join(REPO, "dist", "remote");
    for (const f of files(remote)) {
      const code = fs.readFileSync(f, "utf8");
      // Its own files by path only (bin/muster.js loads the child-side commands; the host its TUI part).
      for (const spec of importCalls(code)) expect(spec, path.relative(remote, f)).toMatch(/^\.\.?\//);
      expect(code, f).not.toMatch(/^import .* from "(?!node:)[^"]*";$/m);
    }
    expect(
      importCalls(fs.readFileSync(path.join(remote, "dist", "child", "host.bundle.js"), "utf8")),
    ).toEqual(["./tui-pty.js"]);
  });

  it("the CLI's code-cached bundle routes every import() of a package through its loader, and is ASCII", () => {
    const bytes = fs.readFileSync(path.join(REPO, "dist", "cli", "bundle", "commands.cjs"));
    expect(bytes.every((b) => b < 0x80)).toBe(true);
    const code = bytes.toString("latin1");
    expect(importCalls(code)).toEqual([]);
    for (const pkg of ["execa", "chokidar", "proper-lockfile"])
      expect(code).toContain(`require("muster:import-module").importModule(${JSON.stringify(pkg)})`);
  });
});
