import { execFile } from "node:child_process";
import * as path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const DEPCRUISE = path.join(ROOT, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs");
const CONFIG = path.join(ROOT, "scripts", "import-rules.cjs");
const FIXTURE = path.join(ROOT, "test", "fixtures", "import-rules");

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Runs the project's dependency rules over `src` under `cwd`; returns the exit code and the violations. */
async function cruise(cwd: string): Promise<{ code: number; violations: Violation[] }> {
  const run = promisify(execFile);
  const args = [DEPCRUISE, "--config", CONFIG, "--output-type", "json", "src"];
  const { stdout } = await run(process.execPath, args, { cwd, maxBuffer: 64 * 1024 * 1024 });
  const violations = (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
  // The same run with the default reporter is what `npm run check:imports` does: it must fail.
  const code = await run(process.execPath, [DEPCRUISE, "--config", CONFIG, "src"], { cwd }).then(
    () => 0,
    (e: { code?: number }) => e.code ?? -1,
  );
  return { code, violations };
}

describe("import rules (scripts/import-rules.cjs)", () => {
  it("reports each deliberately wrong import of the fixture tree, and none of the right ones", async () => {
    const { code, violations } = await cruise(FIXTURE);
    expect(code).not.toBe(0);
    const found = violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
    expect(found).toEqual(
      [
        "base-only-base: src/util/late.ts → src/core/api.ts",
        "core-no-concrete-backend: src/core/tmux.ts → src/mux/tmux/backend.ts",
        "core-no-concrete-place: src/core/place.ts → src/place/local/index.ts",
        "place-knows-no-terminal: src/place/pane.ts → src/mux/tmux/backend.ts",
        "core-not-front-end: src/core/render.ts → src/cli/main.ts",
        "front-end-only-core: src/cli/main.ts → src/runners/agent.ts",
        "front-end-only-core: src/tui/app.ts → src/runners/agent.ts",
        "front-end-renders-views: src/mcp/shape.ts → src/core/children.ts",
        "mux-knows-no-agents: src/mux/backend.ts → src/runners/agent.ts",
        // The cycle api.ts → cycle.ts → api.ts, reported once.
        "no-cycles: src/core/api.ts → src/core/cycle.ts",
        "part-not-core: src/runners/core-errors.ts → src/core/api.ts",
        "runners-not-mux: src/runners/pane.ts → src/mux/backend.ts",
      ].sort(),
    );
  }, 60_000);

  it("the project's own tree keeps every rule", async () => {
    const { code, violations } = await cruise(ROOT);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`)).toEqual([]);
    expect(code).toBe(0);
  }, 60_000);
});
