import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wfsandbox");

describe("muster workflow run --sandbox: a model-written program on real children", () => {
  it("fans out two mock children from QuickJS, joins their answers, and records both steps in the run", async () => {
    const file = path.join(sb.cwd, "fan.js");
    fs.writeFileSync(
      file,
      [
        `const hs = ["left", "right"].map((side) => ctx.agent({ agent: "mock", prompt: "Side " + side + " of " + input }));`,
        `const rs = await ctx.await(hs, "all");`,
        `ctx.log("joined " + rs.length);`,
        `return rs.map((r) => r.status + ":" + /Task: (.*)/.exec(r.text || "")[1]);`,
      ].join("\n"),
    );
    const r = await sb.json(["workflow", "run", "fan.js", "--sandbox", "the pie"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.status).toBe("completed");
    expect(r.data.result).toEqual(["completed:Side left of the pie", "completed:Side right of the pie"]);
    expect(r.data.steps.map((a: { childId?: string }) => typeof a.childId)).toEqual(["string", "string"]);
    const status = await sb.json(["workflow", "status", r.data.runId]);
    expect(status.data.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
    expect(r.stderr).toMatch(/joined 2/);
  });

  it("a sandboxed program cannot reach the host: Function('return process') fails the run, exit 1", async () => {
    fs.writeFileSync(path.join(sb.cwd, "escape.js"), `return Function("return process")().pid;`);
    const r = await sb.run(["workflow", "run", "escape.js", "--sandbox"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/failed: the program threw ReferenceError: .*process/);
    const missing = await sb.run(["workflow", "run", "nope.js", "--sandbox"]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/no such file: .*nope\.js/);
  });
});
