/**
 * A trusted code workflow (outside --sandbox) runs in a thread of its own: muster hears SIGINT and SIGTERM
 * while the function busy-loops, and `process.exit` in it ends only its thread. Either way the run's children
 * are cancelled and the run is recorded as settled, never left `interrupted`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfstop");

/** A module whose function starts a child that never answers, then does `then`. */
function module(name: string, then: string): string {
  const file = path.join(sb.cwd, `${name}.mjs`);
  fs.writeFileSync(
    file,
    `export default async (ctx) => {\n  ctx.agent({ agent: "mock", prompt: "Hang.\\nmock: hang" });\n  await new Promise((r) => setTimeout(r, 50));\n  ${then}\n};\n`,
  );
  return file;
}

describe("code workflows muster can stop", { timeout: 240_000 }, () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} during a busy loop: exit 130, the run cancelled, its child cancelled`, async () => {
      const name = `busy-${signal.toLowerCase()}`;
      const run = runInBackground(sb, module(name, "for (;;) {}"));
      const view = await whenStepRunning(sb, name, 0);
      run.kill(signal);
      const out = await run;
      expect(out.exitCode, out.stderr).toBe(130);
      expect(out.stderr).toMatch(/cancelling the run's children/);
      const after = (await sb.json(["workflow", "status", view.runId])).data;
      expect(after.status).toBe("cancelled");
      expect(after.steps[0]).toMatchObject({ id: "agent-1", status: "cancelled" });
      const child = (await sb.json(["status", view.steps[0].childId])).data;
      // Not running on: cancelled (or closed, as a child whose turn was settled for it shows).
      expect(["cancelled", "closed"]).toContain(child.status);
    });
  }

  it("process.exit(0) in the function ends only its thread: exit 1, the run failed, its child cancelled", async () => {
    const run = runInBackground(sb, module("exits", "process.exit(0);"));
    const out = await run;
    expect(out.exitCode, out.stderr).toBe(1);
    expect(out.stderr).toMatch(
      /workflow run \w+ failed: the workflow function ended its thread \(exit code 0\) before returning/,
    );
    const runs = (await sb.json(["workflow", "runs"])).data.runs;
    const view = runs.find((r: { workflow: string }) => r.workflow === "exits");
    expect(view.status).toBe("failed");
    expect(view.steps[0].status).toBe("cancelled");
  });
});
