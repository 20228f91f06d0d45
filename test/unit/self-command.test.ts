// How hints spell muster (src/util/self-bin.ts): `muster` only when the user's shell would run this install.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ensureSelfBinDir, SELF_SCRIPT, selfCommand } from "../../src/util/self-bin.js";

const base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-self-"));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

function binDir(name: string, make: (file: string) => void): string {
  const dir = path.join(base, name);
  fs.mkdirSync(dir, { recursive: true });
  make(path.join(dir, "muster"));
  return dir;
}
const linked = binDir("linked", (f) => fs.symlinkSync(SELF_SCRIPT, f));
const other = binDir("other", (f) =>
  fs.writeFileSync(f, "#!/bin/sh\necho another muster\n", { mode: 0o755 }),
);
const npx = binDir(path.join("_npx", "abc", "node_modules", ".bin"), (f) => fs.symlinkSync(SELF_SCRIPT, f));
const plain = "/usr/bin:/bin";

describe("selfCommand", () => {
  it("is `muster` when the first muster on PATH is this install (npm link), else `npx muster`", () => {
    expect(selfCommand({ PATH: `${linked}:${plain}` })).toBe("muster");
    expect(selfCommand({ PATH: plain })).toBe("npx muster");
    expect(selfCommand({ PATH: `${other}:${linked}:${plain}` })).toBe("npx muster");
    expect(selfCommand({})).toBe("npx muster");
  });

  it("run through npx: npm's own PATH folders are not the user's shell", () => {
    expect(selfCommand({ PATH: `${npx}:${plain}`, npm_lifecycle_event: "npx", npm_command: "exec" })).toBe(
      "npx muster",
    );
    expect(selfCommand({ PATH: `${npx}:${plain}`, npm_lifecycle_event: "demo" })).toBe("npx muster");
    expect(selfCommand({ PATH: `${npx}:${linked}:${plain}`, npm_lifecycle_event: "demo" })).toBe("muster");
  });

  it("inside a child's pane the shim the host puts first on PATH counts as this install", () => {
    const shim = ensureSelfBinDir(path.join(base, "state"));
    expect(fs.statSync(path.join(shim, "muster")).mode & 0o100).toBeTruthy();
    expect(ensureSelfBinDir(path.join(base, "state"))).toBe(shim); // same content: left as is
    expect(selfCommand({ PATH: `${shim}:${plain}`, MUSTER_CHILD_ID: "x", npm_command: "exec" })).toBe(
      "muster",
    );
  });
});
