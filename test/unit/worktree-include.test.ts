// The worktree-include list: which lines name a path, and which are refused before anything is copied.
import { describe, expect, it } from "vitest";
import { parseIncludeList } from "../../src/isolation/include.js";

const F = "/r/.muster/worktree-include";

describe("parseIncludeList", () => {
  it("takes one path a line, skipping blanks and # comments, normalised", () => {
    expect(parseIncludeList("# env\n.env\n\n  config/local/  \r\n./a/../b.txt\n", F)).toEqual([
      { line: 2, path: ".env" },
      { line: 4, path: "config/local" },
      { line: 5, path: "b.txt" },
    ]);
  });

  it.each([
    ["../x", "line 2: ../x leads out of the checkout"],
    ["a/../../x", "line 2: a/../../x leads out of the checkout"],
    ["/etc/passwd", "line 2: /etc/passwd is absolute; give a path inside the checkout"],
    [".", "line 2: . names the whole checkout"],
    ["a/..", "line 2: a/.. names the whole checkout"],
    [".git/config", "line 2: .git/config is git's own folder"],
  ])("refuses %s naming the file and line", (p, said) => {
    expect(() => parseIncludeList(`ok\n${p}\n`, F)).toThrow(`${F} ${said}`);
  });
});
