import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { agentTestFiles, dirSize, elapsed, progressLine, skipNotice } from "../../scripts/install-lib.mjs";

const REPO = path.resolve(import.meta.dirname, "../..");

describe("installing the agent CLIs: progress", () => {
  it("dirSize counts every file below a folder, does not follow symlinks, and is 0 for a missing folder", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-size-"));
    try {
      fs.mkdirSync(path.join(dir, "a", "b"), { recursive: true });
      fs.writeFileSync(path.join(dir, "a", "one"), Buffer.alloc(1000));
      fs.writeFileSync(path.join(dir, "a", "b", "two"), Buffer.alloc(3 * 1024 * 1024));
      const big = path.join(dir, "a", "b", "two");
      fs.symlinkSync(big, path.join(dir, "link"));
      const link = fs.lstatSync(path.join(dir, "link")).size;
      expect(dirSize(dir)).toBe(1000 + 3 * 1024 * 1024 + link);
      expect(dirSize(path.join(dir, "missing"))).toBe(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the progress line says what, which of how many, MB so far and the state of each", () => {
    const line = progressLine(
      [
        { name: "claude", version: "2.1.332", state: "cached", bytes: 0, attempt: 0 },
        { name: "codex", version: "0.171.0", state: "installing", bytes: 52_428_800, attempt: 1 },
        { name: "pi", version: "0.73.1", state: "retrying", bytes: 1_048_576, attempt: 2 },
        { name: "opencode", version: "1.18.33", state: "done", bytes: 104_857_600, attempt: 1 },
        { name: "gemini", version: "0.61.0", state: "failed", bytes: 0, attempt: 2 },
      ],
      0,
      125_000,
    );
    expect(line).toBe(
      "agent CLIs: 3 of 5 finished, 2 m 05 s · 1/5 claude@2.1.332 cached · 2/5 codex@0.171.0 50.0 MB · " +
        "3/5 pi@0.73.1 1.0 MB (retry 1) · 4/5 opencode@1.18.33 done (100.0 MB) · 5/5 gemini@0.61.0 FAILED",
    );
    expect(elapsed(1500)).toBe("1.5 s");
    expect(elapsed(600_000)).toBe("10 m 00 s");
  });
});

describe("MUSTER_SKIP_AGENT_CLIS", () => {
  it("the notice names every skipped file and why, loudly", () => {
    const files = agentTestFiles(REPO, ["claude", "codex", "pi", "opencode", "gemini", "nosuchcli"]);
    expect(files).toEqual(
      ["claude", "codex", "pi", "opencode", "gemini"].map((n) => `test/agents/${n}.test.ts`),
    );
    const text = skipNotice(files);
    expect(text).toMatch(/^#{78}\n# SKIPPED: 5 agent CLI test files — NOT run, NOT passed:/);
    for (const f of files) expect(text).toContain(`#   ${f}`);
    expect(text).toContain("MUSTER_SKIP_AGENT_CLIS=1 is set");
    expect(text).toContain("CI never sets it");
  });

  it("CI never skips them: .ci/run unsets the switch before the tests", () => {
    const ci = fs.readFileSync(path.join(REPO, ".ci", "run"), "utf8");
    const unset = ci.indexOf("unset MUSTER_SKIP_AGENT_CLIS");
    expect(unset).toBeGreaterThan(0);
    expect(unset).toBeLessThan(ci.indexOf("npm test"));
    expect(ci).not.toMatch(/MUSTER_SKIP_AGENT_CLIS=/);
  });
});

describe("the pinned list", () => {
  it("holds the ACP adapters beside the runners' CLIs, each at an exact version with its agent test file", async () => {
    // @ts-expect-error plain JS module (reads the build)
    const { ACP_ADAPTERS, PINNED_CLIS } = await import("../../scripts/pinned-clis.mjs");
    const names = PINNED_CLIS.map((c: { name: string }) => c.name);
    expect(names).toEqual(expect.arrayContaining(["claude", "codex", "claude-agent-acp", "codex-acp"]));
    for (const a of ACP_ADAPTERS as { name: string; pkg: string; version: string }[]) {
      expect(PINNED_CLIS).toContainEqual(a);
      expect(a.version).toMatch(/^\d+\.\d+\.\d+$/);
    }
    expect(agentTestFiles(REPO, ["claude-agent-acp", "codex-acp"])).toEqual([
      "test/agents/claude-agent-acp.test.ts",
      "test/agents/codex-acp.test.ts",
    ]);
  });
});
