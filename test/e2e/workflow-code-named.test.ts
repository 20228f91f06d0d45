import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-wfnamed");

function write(rel: string, text: string): string {
  const file = path.join(sb.cwd, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

const ECHO = `export default async (ctx, input) => (await ctx.agent({ agent: "mock", prompt: "Echo " + input }).await()).text;\n`;

describe("code workflows found by name in the workflow folders", () => {
  it("list shows each workflow's kind and the file that won; a project module shadows a bundled one by its exported name", async () => {
    const bundled = await sb.json(["workflow", "list"]);
    expect(bundled.exitCode, bundled.stderr).toBe(0);
    const byName = (d: { workflows: { name: string }[] }, n: string) =>
      // biome-ignore lint/suspicious/noExplicitAny: the list as --json prints it
      d.workflows.find((w) => w.name === n) as any;
    expect(byName(bundled.data, "parallel-review")).toMatchObject({
      kind: "code",
      layer: "bundled",
      source: path.join(REPO, "workflows", "parallel-review.mjs"),
      steps: [],
    });
    expect(byName(bundled.data, "implement-review-loop")).toMatchObject({ kind: "code", layer: "bundled" });
    expect(byName(bundled.data, "review-chain")).toMatchObject({ kind: "toml" });

    const echo = write(".muster/workflows/echo.mjs", ECHO);
    const mine = write(
      ".muster/workflows/team/review.mjs",
      `export const name = "parallel-review";\nexport const description = "Ours.";\n${ECHO}`,
    );
    write(".muster/workflows/nodefault.mjs", `export const name = "nodefault";\n`);
    write(".muster/workflows/typed.ts", ECHO);
    try {
      const d = (await sb.json(["workflow", "list"])).data;
      expect(byName(d, "echo")).toMatchObject({ kind: "code", layer: "project", source: echo });
      expect(byName(d, "parallel-review")).toMatchObject({
        kind: "code",
        layer: "project",
        source: mine,
        description: "Ours.",
        shadows: [{ layer: "bundled", source: path.join(REPO, "workflows", "parallel-review.mjs") }],
      });
      expect(byName(d, "typed")).toBeUndefined();
      expect(d.warnings.join("\n")).toMatch(/nodefault\.mjs: no default export/);
      const human = await sb.run(["workflow", "list"]);
      expect(human.stdout).toMatch(/^NAME\s+KIND\s+STEPS\s+LAYER\s+SOURCE/m);
      expect(human.stdout).toMatch(/^echo\s+code\s+-\s+project\s+\.\/\.muster\/workflows\/echo\.mjs/m);
      expect(human.stdout).toMatch(/^review-chain\s+toml\s+3\s+bundled/m);
    } finally {
      fs.rmSync(path.join(sb.cwd, ".muster"), { recursive: true, force: true });
    }
  });

  it("muster workflow run <name> runs the module that won the name; a broken one is an error, not a fallback", async () => {
    write(".muster/workflows/echo.mjs", ECHO);
    write(".muster/workflows/nodefault.mjs", `export const name = "nodefault";\n`);
    try {
      const r = await sb.run(["workflow", "run", "echo", "hello"]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^# mock answer\n\nTask: Echo hello\n/);
      const runs = (await sb.json(["workflow", "runs"])).data.runs;
      expect(runs.at(-1)).toMatchObject({
        workflow: "echo",
        source: path.join(sb.cwd, ".muster/workflows/echo.mjs"),
        status: "completed",
      });
      const bad = await sb.run(["workflow", "run", "nodefault"]);
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toMatch(/nodefault\.mjs: no default export/);
    } finally {
      fs.rmSync(path.join(sb.cwd, ".muster"), { recursive: true, force: true });
    }
  });

  it("over MCP: {} lists code workflows with their kind, {name} runs one, and each is a workflow:<name> prompt", async () => {
    write(".muster/workflows/echo.mjs", ECHO);
    const client = await connectMcp(sb);
    try {
      const call = async (args: Record<string, unknown>) => {
        const r = await client.callTool({ name: "subagents_workflow", arguments: args }, undefined, {
          timeout: 60_000,
        });
        const text = (r.content as { text: string }[])[0]!.text;
        return { isError: !!r.isError, text, data: r.isError ? undefined : JSON.parse(text) };
      };
      const list = await call({});
      expect(list.data.workflows.find((w: { name: string }) => w.name === "echo")).toMatchObject({
        kind: "code",
        steps: [],
      });
      const run = await call({ name: "echo", input: "over mcp" });
      expect(run.isError, run.text).toBe(false);
      expect(run.data).toMatchObject({ workflow: "echo", status: "completed" });
      expect(run.data.result).toMatch(/Task: Echo over mcp/);
      expect(run.data.steps).toEqual([
        expect.objectContaining({ id: "agent-1", agent: "mock", status: "completed" }),
      ]);
      // await: false: the run id at once; a later {runId} call waits for the same result.
      const later = await call({ name: "echo", input: "later", await: false });
      expect(later.isError, later.text).toBe(false);
      expect(later.data).toMatchObject({ workflow: "echo", status: "running" });
      const awaited = await call({ runId: later.data.runId });
      expect(awaited.data).toMatchObject({ runId: later.data.runId, workflow: "echo", status: "completed" });
      expect(awaited.data.result).toMatch(/Task: Echo later/);
      const prompts = await client.listPrompts();
      expect(prompts.prompts.map((p) => p.name)).toEqual(
        expect.arrayContaining(["workflow:echo", "workflow:parallel-review", "workflow:review-chain"]),
      );
      const got = await client.getPrompt({ name: "workflow:echo", arguments: { input: "x" } });
      expect((got.messages[0]!.content as { text: string }).text).toContain('{"name":"echo","input":"x"}');
    } finally {
      await client.close();
      fs.rmSync(path.join(sb.cwd, ".muster"), { recursive: true, force: true });
    }
  });

  it("a run's result has one shape: `workflow run --json` and the MCP tool answer the same fields, code and TOML", async () => {
    // One call completes, one errors (an unknown agent): both kinds of step, and the function's value.
    write(
      ".muster/workflows/pair.mjs",
      `export default async (ctx, input) => {\n  const [a, b] = await ctx.await([ctx.agent({ agent: "mock", prompt: "A " + input }), ctx.agent({ agent: "nobody", prompt: "B" })], "all");\n  return { a: a.status, b: b.status };\n};\n`,
    );
    write(
      ".muster/workflows/duo.toml",
      `name = "duo"\n[[steps]]\nid = "one"\nagent = "mock"\nprompt = "One."\n[[steps]]\nid = "two"\nagent = "mock"\nprompt = "Two."\nneeds = ["one"]\n`,
    );
    // The shape of a value: its keys (sorted) and their shapes, never the values (ids, paths, texts differ).
    const shape = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(shape)
        : v && typeof v === "object"
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k, shape((v as Record<string, unknown>)[k])]),
            )
          : typeof v;
    const client = await connectMcp(sb);
    try {
      for (const name of ["pair", "duo"]) {
        const cli = await sb.json(["workflow", "run", name, "same"]);
        expect(cli.exitCode, cli.stderr).toBe(0);
        const r = await client.callTool(
          { name: "subagents_workflow", arguments: { name, input: "same" } },
          undefined,
          {
            timeout: 60_000,
          },
        );
        const text = (r.content as { text: string }[])[0]!.text;
        expect(r.isError, text).toBeFalsy();
        const mcp = JSON.parse(text);
        expect(shape(mcp)).toEqual(shape(cli.data));
        expect(mcp).toMatchObject({
          workflow: name,
          status: "completed",
          kind: name === "pair" ? "code" : "toml",
        });
        expect(mcp.agents).toBeUndefined();
      }
      const pair = (await sb.json(["workflow", "run", "pair", "x"])).data;
      expect(pair.result).toEqual({ a: "completed", b: "errored" });
      expect(pair.steps).toEqual([
        expect.objectContaining({
          id: "agent-1",
          agent: "mock",
          status: "completed",
          text: expect.any(String),
        }),
        expect.objectContaining({
          id: "agent-2",
          agent: "nobody",
          status: "errored",
          reason: expect.any(String),
        }),
      ]);
    } finally {
      await client.close();
      fs.rmSync(path.join(sb.cwd, ".muster"), { recursive: true, force: true });
    }
  });
});
