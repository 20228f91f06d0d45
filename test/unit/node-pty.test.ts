import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { nodePty } from "../../src/util/node-pty.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-nodepty-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));
const from = pathToFileURL(path.join(base, "app", "index.js")).href;
const pkg = path.join(base, "node_modules", "node-pty");

describe("nodePty (an optional dependency)", () => {
  it("says how to get it when it is missing, when it is not built, and gives its version when it is", () => {
    fs.mkdirSync(path.join(base, "app"), { recursive: true });
    const missing = nodePty(from);
    expect(missing).toMatchObject({
      problem: expect.stringMatching(/^node-pty is not installed .*python3, make and a C\+\+ compiler/),
    });

    fs.mkdirSync(pkg, { recursive: true });
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "node-pty", version: "1.1.0" }));
    expect(nodePty(from)).toMatchObject({ problem: expect.stringContaining("installed but not built") });

    fs.mkdirSync(path.join(pkg, "build", "Release"), { recursive: true });
    fs.writeFileSync(path.join(pkg, "build", "Release", "pty.node"), "");
    expect(nodePty(from)).toEqual({ version: "1.1.0" });
  });

  it("finds this install's own node-pty", () => {
    expect(nodePty()).toMatchObject({ version: expect.stringMatching(/^\d+\.\d+/) });
  });
});
