// The one quoting for a shell that runs what muster writes (a CLI's hook command): a real /bin/sh must
// hand every word back unchanged, hostile ones included.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { shellWords } from "../../src/util/text.js";

describe("shellWords", () => {
  it("a real sh gets every word back as it was: spaces, quotes, $, backticks, newlines, NAME=, empty", () => {
    const words = [
      "/usr/bin/printf",
      "%s\\0",
      "/opt/my node/bin/node",
      "/x/it's here/hook.js",
      "$HOME `id` ;",
      "it's",
      '"double"',
      "$HOME",
      "`id`",
      "$(id)",
      "a\nb",
      "FOO=bar",
      "",
      "-n",
      "\\",
      "; rm -rf /tmp/never",
    ];
    const r = spawnSync("/bin/sh", ["-c", shellWords(words)], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split("\0").slice(0, -1)).toEqual(words.slice(2));
  });
});
