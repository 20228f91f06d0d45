// The argv each CLI runner builds: the CLI's own spelling of model, reasoning, instructions, tools and resume,
// and a prompt that starts with "-" is never read as an option.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { getRunner } from "../../src/runners/registry.js";
import type { TurnInput } from "../../src/runners/types.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-runners-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const base = (over: Partial<TurnInput> = {}): TurnInput => ({
  turnId: "t1",
  prompt: "-rm everything? no: just say hi",
  promptFile: path.join(dir, "prompt.txt"),
  cwd: dir,
  env: { PATH: "/usr/bin" },
  runnerDir: path.join(dir, "runner"),
  ...over,
});
const plan = (name: string, over: Partial<TurnInput> = {}) => getRunner(name)!.plan(base(over));
const flagValue = (argv: string[], flag: string) => argv[argv.indexOf(flag) + 1];

describe("agent CLI runners build argv arrays in each CLI's own spelling", () => {
  it("claude: stream-json, model, effort, appended instructions, tools, resume, prompt after --", () => {
    const { argv, parser } = plan("claude", {
      model: "anthropic:claude-sonnet-4-5",
      reasoning: "high",
      systemPrompt: "Be brief.",
      tools: ["Read", "Bash(git:*)"],
      maxTurns: 3,
      runnerSessionId: "sid-1",
    });
    expect(argv.slice(0, 5)).toEqual(["claude", "-p", "--output-format", "stream-json", "--verbose"]);
    expect(flagValue(argv, "--model")).toBe("claude-sonnet-4-5");
    expect(flagValue(argv, "--effort")).toBe("high");
    expect(flagValue(argv, "--append-system-prompt")).toBe("Be brief.");
    expect(flagValue(argv, "--allowedTools")).toBe("Read,Bash(git:*)");
    expect(flagValue(argv, "--tools")).toBe("Read,Bash");
    expect(flagValue(argv, "--max-turns")).toBe("3");
    expect(flagValue(argv, "--resume")).toBe("sid-1");
    expect(argv.slice(-2)).toEqual(["--", "-rm everything? no: just say hi"]);
    expect(parser).toBeDefined();
  });

  it("codex: exec --json in the workspace sandbox; resume is a subcommand; config overrides as TOML strings", () => {
    const first = plan("codex", {
      model: "openai:gpt-5.5",
      reasoning: "low",
      systemPrompt: 'Say "hi".',
    }).argv;
    expect(first.slice(0, 6)).toEqual([
      "codex",
      "exec",
      "--json",
      "--skip-git-repo-check",
      "--sandbox",
      "workspace-write",
    ]);
    expect(flagValue(first, "-m")).toBe("gpt-5.5");
    expect(first).toContain('model_reasoning_effort="low"');
    expect(first).toContain('developer_instructions="Say \\"hi\\"."');
    expect(first.join(" ")).not.toContain("model_provider");
    const later = plan("codex", { model: "local:qwen", runnerSessionId: "th-1", systemPrompt: "x" }).argv;
    expect(later).toContain('model_provider="local"');
    expect(later.slice(-4)).toEqual(["resume", "th-1", "--", "-rm everything? no: just say hi"]);
    expect(later.join(" ")).not.toContain("developer_instructions");
  });

  it("native structured output: claude --json-schema inline, codex --output-schema <file>; only schemas each takes", () => {
    const strict = {
      type: "object",
      properties: { files: { type: "array", items: { type: "string" } } },
      required: ["files"],
      additionalProperties: false,
    };
    const claude = plan("claude", { outputSchema: strict }).argv;
    expect(JSON.parse(flagValue(claude, "--json-schema")!)).toEqual(strict);
    expect(plan("claude").argv).not.toContain("--json-schema");
    const codex = plan("codex", { turnId: "t-schema", outputSchema: strict }).argv;
    const file = flagValue(codex, "--output-schema")!;
    expect(path.dirname(file)).toBe(path.join(dir, "runner"));
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(strict);
    expect(codex.indexOf("--output-schema")).toBeLessThan(codex.indexOf("--"));
    expect(plan("codex").argv).not.toContain("--output-schema");
    const takes = (name: string, schema: object) => !!getRunner(name)!.nativeSchema?.(schema);
    const open = { type: "object", properties: { files: { type: "array" } }, required: ["files"] };
    const optional = { ...strict, required: [] };
    const deepOpen = { ...strict, properties: { o: { type: "object", properties: {} } }, required: ["o"] };
    const huge = { type: "object", description: "x".repeat(70 * 1024) };
    expect([strict, open, { type: "array" }, huge].map((s) => takes("claude", s))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([strict, open, optional, deepOpen, { type: "array" }].map((s) => takes("codex", s))).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
    for (const other of ["gemini", "pi", "opencode", "mock", "command"])
      expect(takes(other, strict)).toBe(false);
  });

  it("claude: a result with structured_output answers with that value as JSON", () => {
    const { parser } = plan("claude");
    const out = parser!.line(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "Here you go.",
        structured_output: { files: ["a.ts"] },
        usage: {},
      }),
    );
    expect(out.find((m) => m.type === "result")).toEqual({
      type: "result",
      status: "completed",
      text: '{"files":["a.ts"]}',
    });
  });

  it("pi: provider and model apart, thinking, tools, session; a leading space keeps a '-' prompt a message", () => {
    const { argv } = plan("pi", {
      model: "local:scripted",
      reasoning: "medium",
      systemPrompt: "Be brief.",
      tools: ["Read", "Bash"],
      runnerSessionId: "s-1",
    });
    expect(argv.slice(0, 3)).toEqual(["pi", "--mode", "json"]);
    expect(flagValue(argv, "--provider")).toBe("local");
    expect(flagValue(argv, "--model")).toBe("scripted");
    expect(flagValue(argv, "--thinking")).toBe("medium");
    expect(flagValue(argv, "--append-system-prompt")).toBe("Be brief.");
    expect(flagValue(argv, "--tools")).toBe("read,bash");
    expect(flagValue(argv, "--session")).toBe("s-1");
    expect(argv.at(-1)).toBe(" -rm everything? no: just say hi");
  });

  it("opencode: provider/model, variant, session; permissions and tools go in the child's own config", () => {
    const { argv, env } = plan("opencode", {
      model: "local:scripted",
      reasoning: "high",
      tools: ["bash"],
      disallowedTools: ["webfetch"],
      runnerSessionId: "ses_1",
      env: { PATH: "/usr/bin", OPENCODE_CONFIG_CONTENT: '{"share":"disabled"}' },
    });
    expect(argv.slice(0, 4)).toEqual(["opencode", "run", "--format", "json"]);
    expect(flagValue(argv, "-m")).toBe("local/scripted");
    expect(flagValue(argv, "--variant")).toBe("high");
    expect(flagValue(argv, "--session")).toBe("ses_1");
    expect(argv.at(-2)).toBe("--");
    expect(JSON.parse(env.OPENCODE_CONFIG_CONTENT!)).toEqual({
      share: "disabled",
      permission: { bash: "allow", edit: "allow", webfetch: "allow" },
      tools: { "*": false, bash: true, webfetch: false },
    });
  });

  it("gemini: the prompt is one --prompt= word (with the profile body on the first turn only)", () => {
    const first = plan("gemini", { model: "google:gemini-2.5-flash", systemPrompt: "Be brief." });
    expect(first.argv.slice(0, 6)).toEqual([
      "gemini",
      "--output-format",
      "stream-json",
      "--approval-mode",
      "yolo",
      "--skip-trust",
    ]);
    expect(flagValue(first.argv, "-m")).toBe("gemini-2.5-flash");
    expect(first.argv.at(-1)).toBe("--prompt=Be brief.\n\n---\n\n-rm everything? no: just say hi");
    const later = plan("gemini", { systemPrompt: "Be brief.", runnerSessionId: "g-1", tools: ["read_file"] });
    expect(flagValue(later.argv, "--resume")).toBe("g-1");
    expect(later.argv.at(-1)).toBe("--prompt=-rm everything? no: just say hi");
    const settings = JSON.parse(fs.readFileSync(later.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH!, "utf8"));
    expect(settings).toEqual({ tools: { core: ["read_file"] } });
  });

  it("a prompt too large for one argv word goes by stdin, exactly as given", () => {
    const big = `-${"y".repeat(200 * 1024)}`;
    fs.writeFileSync(path.join(dir, "big.txt"), big);
    for (const name of ["claude", "codex", "pi", "opencode", "gemini"]) {
      const p = plan(name, { prompt: big, promptFile: path.join(dir, "big.txt") });
      expect(
        p.argv.every((w) => w.length < 1024),
        name,
      ).toBe(true);
      expect(fs.readFileSync(p.stdinFile!, "utf8"), name).toBe(big);
    }
    expect(plan("codex", { prompt: big }).argv.slice(-2)).toEqual(["--", "-"]);
    expect(plan("gemini", { prompt: big }).argv.at(-1)).toBe("--prompt=");
    // With the profile body ahead of the prompt, the runner writes its own file.
    const withBody = plan("opencode", { prompt: big, systemPrompt: "Be brief." });
    expect(fs.readFileSync(withBody.stdinFile!, "utf8")).toBe(`Be brief.\n\n---\n\n${big}`);
    expect(plan("claude").stdinFile).toBeUndefined();
  });

  it("an explicit binary path in MUSTER_<CLI>_BIN wins over PATH", () => {
    for (const name of ["claude", "codex", "pi", "opencode", "gemini", "aider"]) {
      const r = getRunner(name)!;
      const { argv } = r.plan(base({ env: { PATH: "/usr/bin", [r.binary!.envVar]: `/opt/${name}` } }));
      expect(argv[0]).toBe(`/opt/${name}`);
    }
  });
});
