// Workflows whose steps run on a real pinned agent CLI against the scripted endpoint: structured
// steps through the CLI's own structured output where it has one, and the bundled review-chain. Called from
// test/agents/<cli>.test.ts, so the same install check and skip rule apply as to the CLI's other checks.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { useSandbox } from "../helpers/cli.js";

interface Endpoint {
  url: string;
  requests: { path: string; api: string | null; body: Record<string, unknown>; scenario: string }[];
  setScenario(s: string): void;
  setStructured(value: unknown): void;
  close(): Promise<void>;
}

/** A schema both CLIs take natively: object root (Claude Code), closed and all-required (Codex's strict mode). */
const STRICT = {
  type: "object",
  properties: { files: { type: "array", items: { type: "string" } } },
  required: ["files"],
  additionalProperties: false,
};

const INSTRUCTION = "Answer with one JSON value only";

/** Where this CLI's request carried a JSON Schema natively, if it did. */
function nativeSchemaOf(name: "claude" | "codex", body: Record<string, unknown>): unknown {
  if (name === "claude")
    return (body.tools as { name: string; input_schema?: unknown }[] | undefined)?.find(
      (t) => t.name === "StructuredOutput",
    )?.input_schema;
  return (body.text as { format?: { type?: string; schema?: unknown } } | undefined)?.format?.schema;
}

export function defineWorkflowChecks(name: "claude" | "codex"): void {
  describe(`workflows on ${name} (real CLI, scripted endpoint)`, { timeout: 240_000 }, () => {
    const sb = useSandbox(`mw-${name}`);
    const binDir = cliBinDir(name) as string;
    const model = TEST_MODELS[name] as string;
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;
    const write = (rel: string, text: string) => {
      const file = path.join(sb.cwd, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
    };
    const modelRequests = (from: number) => ep.requests.slice(from).filter((q) => q.api !== null);
    const structuredFlow = (flow: string, schema: object) =>
      write(
        `.muster/workflows/${flow}.toml`,
        [
          `name = "${flow}"`,
          "[[steps]]",
          'id = "files"',
          `agent = "${name}"`,
          `model = "${model}"`,
          'prompt = "List the files to review."',
          `output = { description = "the files to review", schema = '${JSON.stringify(schema)}' }`,
          "",
        ].join("\n"),
      );

    beforeAll(async () => {
      if (!fs.existsSync(path.join(binDir, name)))
        throw new Error(`${name} is not installed in ${cliCache()}: run node scripts/install-clis.mjs`);
      ep = (await startEndpoint()) as Endpoint;
      const tmp = path.join(sb.cwd, "..", "tmp");
      fs.mkdirSync(tmp, { recursive: true });
      env = {
        ...prepareCli(name, ep.url, sb.env.HOME as string),
        // Claude Code retries a 500 ten times with backoff; nothing here should need one.
        CLAUDE_CODE_MAX_RETRIES: "0",
        PATH: `${binDir}${path.delimiter}${sb.env.PATH}`,
        TMPDIR: tmp,
      };
    });
    afterAll(async () => {
      await ep?.close();
    });

    it("a structured step uses the CLI's native structured output: the schema reaches the model, ajv still checks", async () => {
      structuredFlow("pick", STRICT);
      ep.setScenario("structured");
      ep.setStructured({ files: ["src/a.ts", "src/b.ts"] });
      const before = ep.requests.length;
      const r = await sb.json(["workflow", "run", "pick"], { env, timeout: 180_000 });
      expect(r.exitCode, `${r.stderr}\n${JSON.stringify(r.data)}`).toBe(0);
      const step = r.data.steps[0];
      expect(step).toMatchObject({
        id: "files",
        status: "completed",
        structured: "native",
        output: { files: ["src/a.ts", "src/b.ts"] },
      });
      const sent = modelRequests(before);
      expect(sent.length).toBeGreaterThan(0);
      // The CLI put the schema in its own structured channel; the prompt did not have to ask for the format.
      expect(nativeSchemaOf(name, sent[0]!.body)).toEqual(STRICT);
      expect(JSON.stringify(sent[0]!.body)).not.toContain(INSTRUCTION);
      expect(JSON.stringify(sent[0]!.body)).toContain("the files to review");
    });

    it("a schema the CLI cannot take natively goes the instructed way, and still decodes", async () => {
      // An array root: Claude Code's StructuredOutput tool needs an object, Codex's strict mode too.
      const list = { type: "array", items: { type: "string" } };
      structuredFlow("pick-list", list);
      ep.setScenario("structured");
      ep.setStructured(["src/c.ts"]);
      const before = ep.requests.length;
      const r = await sb.json(["workflow", "run", "pick-list"], { env, timeout: 180_000 });
      expect(r.exitCode, `${r.stderr}\n${JSON.stringify(r.data)}`).toBe(0);
      expect(r.data.steps[0]).toMatchObject({
        status: "completed",
        structured: "instructed",
        output: ["src/c.ts"],
      });
      const first = modelRequests(before)[0]!;
      expect(nativeSchemaOf(name, first.body)).toBeUndefined();
      expect(JSON.stringify(first.body)).toContain(INSTRUCTION);
    });

    it("the bundled review-chain runs its three steps on the CLI: the synthesis gets both reviews", async () => {
      // The bundled reviewer runs the mock runner: shadow it with this CLI (what the profile tells users to do).
      write(
        ".muster/agents/reviewer.md",
        `---\ndescription: "Reviewer on ${name}."\nrunner: ${name}\nmodel: ${model}\n---\nYou review changes.\n`,
      );
      ep.setScenario("text");
      const before = ep.requests.length;
      const r = await sb.json(["workflow", "run", "review-chain", "the change: add retries"], {
        env,
        timeout: 200_000,
      });
      expect(r.exitCode, `${r.stderr}\n${JSON.stringify(r.data)}`).toBe(0);
      expect(r.data.status).toBe("completed");
      expect(r.data.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
        ["correctness", "completed"],
        ["tests", "completed"],
        ["synthesis", "completed"],
      ]);
      const [correctness, tests, synthesis] = r.data.steps as { childId: string; text: string }[];
      for (const s of [correctness!, tests!, synthesis!])
        expect(s.text.trim()).toMatch(/^scripted answer \d+$/);
      expect(new Set([correctness!.childId, tests!.childId, synthesis!.childId]).size).toBe(3);
      // Every step's child is a real child of this primary, on this CLI.
      const status = await sb.json(["status", synthesis!.childId], { env });
      expect(status.data.runner ?? status.data.child?.runner).toBe(name);
      // The synthesis request carried the workflow input and both reviews, labelled, in `needs` order.
      const last = JSON.stringify(
        modelRequests(before).find((q) => JSON.stringify(q.body).includes("## Output of step"))?.body ?? {},
      );
      expect(last).toContain("the change: add retries");
      const i = last.indexOf('## Output of step \\"correctness\\"');
      const j = last.indexOf('## Output of step \\"tests\\"');
      expect(i).toBeGreaterThan(-1);
      expect(j).toBeGreaterThan(i);
      expect(last).toContain(correctness!.text.trim());
      expect(last).toContain(tests!.text.trim());
    });
  });
}
