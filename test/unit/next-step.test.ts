import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { MusterError, NEXT_ACTIONS, type NextAction, type NextStep } from "../../src/base/errors.js";
import { buildProgram } from "../../src/cli/main.js";
import { cliErrorText, cliNextStep } from "../../src/cli/next-step.js";
import { readPrompt } from "../../src/cli/prompt.js";
import { load } from "../../src/mcp/install/files.js";
import { mcpErrorText, mcpNextStep } from "../../src/mcp/next-step.js";
import { toolTable } from "../../src/mcp/tools.js";

const ID = "019a0000-0000-7000-8000-0000deadbeef";
const OTHER = "019a0000-0000-7000-8000-00000000cafe";
const PRIMARY = "019a0000-0000-7000-8000-0000aaaa1111";

/** One sample of every action, with what each front end says for it (the CLI's words before `withSelf`). */
const SAMPLES: Record<NextAction, [NextStep, string, string][]> = {
  resume: [
    [
      { action: "resume", id: ID },
      'continue it with: muster spawn --resume deadbeef "…"',
      `continue it with the subagents_run tool: {"id": "${ID}", "prompt": "…"}`,
    ],
  ],
  spawn: [
    [
      { action: "spawn", agent: "mock" },
      'start a new one: muster spawn --agent mock "…"',
      'start a new one with the subagents_run tool: {"agent": "mock", "prompt": "…"}',
    ],
    [
      { action: "spawn", agent: "command", cwd: "/tmp/sub dir", argv: ["sh", "-c", "echo hi"] },
      "start a new one: muster spawn --agent command --cwd '/tmp/sub dir' \"…\" -- sh -c 'echo hi'",
      'start a new one with the subagents_run tool: {"agent": "command", "prompt": "…"}',
    ],
  ],
  give_argv: [
    [
      { action: "give_argv", agent: "lint" },
      'give its argv after --, e.g. muster spawn --agent lint "task" -- cat {prompt_file}',
      "give its argv as command: in its agent profile; a tool call cannot pass one",
    ],
    [
      { action: "give_argv" },
      'give its argv after --, e.g. muster spawn --agent command "task" -- cat {prompt_file}',
      "give its argv as command: in its agent profile; a tool call cannot pass one",
    ],
  ],
  wait: [
    [
      { action: "wait", ids: [ID] },
      "wait for it: muster wait deadbeef",
      `wait for it with the subagents_await tool: {"ids": ["${ID}"], "mode": "all"}`,
    ],
  ],
  wait_or_remove: [
    [
      { action: "wait_or_remove", ids: [ID, OTHER] },
      "wait for it (muster wait deadbeef 0000cafe), or cancel and remove it: muster rm --force deadbeef 0000cafe",
      "wait for it with the subagents_await tool, or cancel it with the subagents_cancel tool first",
    ],
  ],
  cancel: [
    [
      { action: "cancel" },
      "close one with muster cancel <id> (muster ls lists them)",
      "close some with the subagents_cancel tool",
    ],
  ],
  status: [
    [
      { action: "status", id: ID },
      "muster status deadbeef lists its turns",
      `the subagents_status tool with {"id": "${ID}"} lists its turns`,
    ],
  ],
  list: [
    [
      { action: "list" },
      "muster ls lists this workspace's children",
      "the subagents_status tool (no id) lists this workspace's children",
    ],
  ],
  agents: [[{ action: "agents" }, "muster agents lists them", "the subagents_agents tool lists them"]],
  primaries: [
    [
      { action: "primaries" },
      "muster ls --all lists every primary",
      "the muster CLI's ls --all lists every primary",
    ],
    [
      { action: "primaries", name: true },
      "pass --primary <id> (see muster ls --all)",
      "start this server with --primary <id> (the muster CLI's ls --all lists every primary)",
    ],
  ],
  reach: [
    [
      { action: "reach", primary: PRIMARY, ref: "beef" },
      "reach it with --primary aaaa1111, e.g. muster status beef --primary aaaa1111",
      `it is reachable from an MCP server started with muster mcp --primary ${PRIMARY}`,
    ],
  ],
  reuse_group: [
    [
      { action: "reuse_group" },
      "join a group that is not sealed yet, or spawn without --group",
      "reuse a groupId that is not sealed yet, or run without groupId",
    ],
  ],
  workflow_runs: [
    [
      { action: "workflow_runs" },
      "muster workflow runs lists them",
      "the muster CLI's workflow runs lists them",
    ],
  ],
};

const all = Object.values(SAMPLES).flat();

describe("a next step is data; each front end says it in its own words", () => {
  it("every action has samples, and every sample is of its own action", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...NEXT_ACTIONS].sort());
    for (const [action, samples] of Object.entries(SAMPLES)) {
      expect(samples.length).toBeGreaterThan(0);
      for (const [step] of samples) expect(step.action).toBe(action);
    }
  });

  it.each(all)("%j: the CLI names a command, the MCP server a tool call", (step, cli, mcp) => {
    expect(cliNextStep(step)).toBe(cli);
    expect(mcpNextStep(step)).toBe(mcp);
  });

  it("the CLI only suggests commands it has; the MCP server only tools it has, named as tools", async () => {
    const commands = new Set((await buildProgram()).commands.flatMap((c) => [c.name(), ...c.aliases()]));
    const tools = new Set(toolTable("").map((t) => t.name));
    for (const [step] of all) {
      const cli = cliNextStep(step);
      expect(cli).not.toMatch(/subagents_/);
      for (const m of cli.matchAll(/\bmuster ([a-z]+)/g)) expect(commands, cli).toContain(m[1]);
      const mcp = mcpNextStep(step);
      // The same rule the e2e MCP test holds every tool error to.
      expect(mcp, "no CLI command").not.toMatch(/\bmuster (spawn|send|wait|ls|agents|gc|cancel)\b/);
      expect(mcp.replace(/\bthe subagents_[a-z]+ tool\b/g, ""), "tools named as such").not.toMatch(
        /subagents_/,
      );
      for (const m of mcp.matchAll(/\bthe (subagents_[a-z]+) tool\b/g)) expect(tools, mcp).toContain(m[1]);
    }
  });

  it("an error's text: the message, then the next step in that front end's words", () => {
    const e = new MusterError("busy", "child x already has an active turn", {
      next: { action: "wait", ids: [ID] },
    });
    expect(cliErrorText(e)).toBe("child x already has an active turn; wait for it: muster wait deadbeef");
    expect(mcpErrorText(e)).toBe(
      `busy: child x already has an active turn; wait for it with the subagents_await tool: {"ids": ["${ID}"], "mode": "all"}`,
    );
    const plain = new MusterError("not_found", 'unknown group "g"');
    expect([cliErrorText(plain), mcpErrorText(plain)]).toEqual([
      'unknown group "g"',
      'not_found: unknown group "g"',
    ]);
    expect(mcpErrorText(new Error("boom"))).toBe("internal: boom");
  });

  it("an error that wraps another keeps it as its cause", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "muster-cause-"));
    try {
      const caught = (fn: () => unknown): MusterError => {
        try {
          fn();
        } catch (e) {
          if (e instanceof MusterError) return e;
          throw e;
        }
        throw new Error("did not throw");
      };
      // A client's config file that cannot be read (a directory): the bounded reader's refusal is the cause.
      const edit = {
        file: dir,
        format: "json" as const,
        entryPath: [],
        merge: (d: object) => d,
        check: () => [],
      };
      const unreadable = caught(() => load(edit));
      expect(unreadable.code).toBe("invalid_config");
      expect(unreadable.cause).toMatchObject({
        code: "integrity",
        message: expect.stringMatching(/not a regular file|directory/),
      });
      // One that does not parse: the parser's error.
      fs.writeFileSync(path.join(dir, "c.toml"), "= broken");
      const unparsed = caught(() => load({ ...edit, file: path.join(dir, "c.toml"), format: "toml" }));
      expect(unparsed.cause).toBeInstanceOf(Error);
      // A prompt file that is not UTF-8: the decoder's error.
      fs.writeFileSync(path.join(dir, "p.txt"), Buffer.from([0x68, 0xff, 0x69]));
      const latin = caught(() => readPrompt(undefined, path.join(dir, "p.txt")));
      expect([latin.code, latin.message]).toEqual([
        "invalid_argument",
        expect.stringContaining("not valid UTF-8"),
      ]);
      expect(latin.cause).toBeInstanceOf(TypeError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
