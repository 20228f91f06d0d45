import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";
import { runInBackground } from "../helpers/workflow.js";

const sb = useSandbox("mt-wfscale");

const STEPS = 300;
const SLOTS = 8;

describe("a TOML workflow of many ready steps (mock agent, real children on tmux)", () => {
  it(`${STEPS} independent steps: at most the run-slot limit in flight, the rest queued; every one completes`, async () => {
    const file = path.join(sb.cwd, "wide.toml");
    const steps = Array.from(
      { length: STEPS },
      (_, i) => `[[steps]]\nid = "s${i}"\nagent = "mock"\nprompt = "Step ${i}.\\nmock: reply=R${i}"\n`,
    );
    fs.writeFileSync(file, `name = "wide"\n${steps.join("")}`);
    sb.env.MUSTER_MAX_RUNNING = String(SLOTS);
    const run = runInBackground(sb, file, true);
    // While it runs, the steps waiting for a place show as queued.
    let sawQueued = false;
    for (let i = 0; i < 600 && !sawQueued && run.exitCode === null; i++) {
      const r = await sb.json(["workflow", "runs"]);
      const wide = r.data.runs?.find((x: { workflow: string }) => x.workflow === "wide");
      if (wide?.steps.some((s: { status: string }) => s.status === "queued")) sawQueued = true;
      else await new Promise((res) => setTimeout(res, 200));
    }
    const out = await run;
    expect(out.stderr).not.toMatch(/could not start|stayed locked/);
    expect(out.exitCode, out.stderr.slice(-2000)).toBe(0);
    expect(sawQueued).toBe(true);
    const result = JSON.parse(out.stdout);
    expect(result.steps.filter((s: { status: string }) => s.status === "completed")).toHaveLength(STEPS);
    expect(result.results.find((s: { id: string }) => s.id === "s299").text).toBe("R299");

    // The run's own record: never more steps in flight than the run-slot limit.
    const events = fs
      .readFileSync(path.join(result.dir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    let inFlight = 0;
    let most = 0;
    for (const e of events) {
      if (e.type === "step_started") most = Math.max(most, ++inFlight);
      if (e.type === "step_settled") inFlight -= 1;
    }
    expect(most).toBeLessThanOrEqual(SLOTS);
    expect(most).toBeGreaterThan(1);
  }, 900_000);
});
