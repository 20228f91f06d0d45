import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { assertChildName, NAME_RULE } from "../../src/core/names.js";

const CLI_DOC = fs.readFileSync(path.join(import.meta.dirname, "../../docs/cli.md"), "utf8");

describe("the child-name rule, as enforced and as documented", () => {
  it("refuses a name of hex digits and dashes only (it reads as an id), and the --name rule in docs/cli.md says so", () => {
    expect(() => assertChildName("a1")).toThrow(/only hex digits/);
    expect(() => assertChildName("cafe-42")).toThrow(/only hex digits/);
    expect(assertChildName("a1x")).toBe("a1x");
    expect(NAME_RULE).toContain("not only hex digits");
    const row = CLI_DOC.split("\n").find((l) => l.startsWith("| `muster spawn [--agent a] [--name n]"));
    expect(row).toContain(NAME_RULE);
  });
});
