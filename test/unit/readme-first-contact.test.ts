// The README's first lines and the facts around them stay true: the two first commands, what puts a fast
// `muster` on PATH, npm's install-script policy, the doctor sample, the MCP tool count (also in docs/mcp.md).
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { toolTable } from "../../src/mcp/tools.js";

const REPO = path.resolve(import.meta.dirname, "../..");
const README = fs.readFileSync(path.join(REPO, "README.md"), "utf8");
const PKG = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8"));
const flat = README.replace(/\s+/g, " ");

describe("README first contact", () => {
  it("opens with the demo, the test suite, and the link that leaves a fast muster on PATH", () => {
    const block = README.slice(
      README.indexOf("```sh\n") + 6,
      README.indexOf("\n```", README.indexOf("```sh\n")),
    );
    const lines = block.split("\n").map((l) => l.replace(/\s+#.*$/, ""));
    expect(lines).toEqual(["npm install && npx muster demo", "npm test", "npm link"]);
    expect(PKG.bin.muster).toBe("bin/muster.js");
    expect(PKG.scripts.test).toBeDefined();
  });

  it("says what npx costs and how else to get a fast muster", () => {
    expect(flat).toContain('`alias muster="node $PWD/bin/muster.js"`');
    expect(flat).toMatch(
      /`npx muster …` also works in this folder .* npm's own start-up adds about 3 s to every call/,
    );
  });

  it("npm 11's install-script policy allows the two dependencies that need their scripts, and says so", () => {
    expect(PKG.allowScripts).toEqual({ esbuild: true, "node-pty": true });
    expect(flat).toContain(
      "npm 11's `npm install` prints no `install-scripts` warning: `allowScripts` in `package.json`",
    );
    expect(flat).toContain("`npm link` still prints one, naming `muster@0.1.0 (prepare: …)`");
  });

  it("the doctor sample has the backend row; tmux is optional", () => {
    expect(README).toMatch(/\nbackend +ok +tmux: new children start here \(the default here;/);
    expect(flat).toContain("tmux (`apt-get install tmux`, `brew install tmux`) is optional");
    expect(README).not.toMatch(/Needs Node 20\+ and tmux/);
  });

  it("names as many MCP tools as tools/list has, here and in docs/mcp.md", () => {
    const n = toolTable("").length;
    expect(n).toBe(12);
    const mcpDoc = fs.readFileSync(path.join(REPO, "docs", "mcp.md"), "utf8").replace(/\s+/g, " ");
    for (const text of [flat, mcpDoc]) {
      expect(text).toContain(`muster has ${n} tools`);
      expect(text).not.toMatch(new RegExp(`muster has (?!${n} )\\d+ tools`));
    }
  });
});
