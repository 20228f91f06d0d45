// scripts/pinned-clis.mjs reads the pinned CLIs from the build (a .mjs script cannot import the TypeScript
// registry): this holds its list equal to the descriptors' `binary.tested` in src/runners/registry.ts.
import { describe, expect, it } from "vitest";
import { ACP_ADAPTERS, PINNED_CLIS } from "../../scripts/pinned-clis.mjs";
import { getRunner, runnerNames } from "../../src/runners/registry.js";

describe("pinned CLIs", () => {
  it("are the runners whose binary names a tested version, then the ACP adapters", () => {
    const fromSource = runnerNames()
      .map((name) => getRunner(name)!)
      .filter((r) => r.binary?.tested)
      .map((r) => ({
        name: r.name,
        pkg: r.binary!.tested!.pkg,
        version: r.binary!.tested!.version,
        bin: r.binary!.command,
      }));
    expect(PINNED_CLIS).toEqual([...fromSource, ...ACP_ADAPTERS]);
    expect(fromSource.map((c) => c.name)).toEqual(["claude", "codex", "pi", "opencode", "gemini"]);
  });
});
