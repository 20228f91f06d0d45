import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wfdefaults");

/** Every workflow bundled in workflows/, by the name `muster workflow list` gives it. */
function bundled(): string[] {
  return fs
    .readdirSync(path.join(REPO, "workflows"))
    .filter((f) => /\.(toml|mjs)$/.test(f))
    .map((f) => f.replace(/\.(toml|mjs)$/, ""))
    .sort();
}

describe("bundled workflows on their default agents", () => {
  it("the list of bundled workflows is what `workflow list` shows as bundled", async () => {
    const list = await sb.json(["workflow", "list"]);
    const names = list.data.workflows
      .filter((w: { layer: string }) => w.layer === "bundled")
      .map((w: { name: string }) => w.name)
      .sort();
    expect(names).toEqual(bundled());
    expect(names.length).toBeGreaterThanOrEqual(4);
  });

  // A plain task, no `mock:` controls: what a first-time user types.
  for (const name of bundled())
    it(`${name} completes, every step completed, with a plain input`, async () => {
      const r = await sb.json(["workflow", "run", name, "Add a --verbose flag to the CLI"], {
        timeout: 120_000,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.data.status).toBe("completed");
      const steps: { status: string; errors?: string[] }[] = r.data.steps;
      expect(steps.length).toBeGreaterThan(0);
      for (const s of steps) expect(s, JSON.stringify(s.errors ?? [])).toMatchObject({ status: "completed" });
    }, 150_000);
});
