// Claude Code's permission prompts in session mode (`--permission-prompt-tool stdio`): a `can_use_tool` control
// request on its stdout goes to the parent (io.askPermission) and its answer goes back as a control_response,
// in the shape Claude Code 2.1.332 accepts (checked against the real CLI in test/agents/permissions-claude).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claudeRunner } from "../../src/runners/claude/runner.js";
import { claudeStreamDriver } from "../../src/runners/claude/stream.js";
import { geminiRunner } from "../../src/runners/gemini/runner.js";
import { opencodeRunner } from "../../src/runners/opencode/runner.js";
import type { AgentMessage, SessionIo, TurnInput } from "../../src/runners/types.js";

type Answer = "allow" | "allow_always" | "deny";

function harness(answer: Answer) {
  const written: Record<string, unknown>[] = [];
  const asked: [string, string | undefined][] = [];
  const io: SessionIo = {
    write: (line) => written.push(JSON.parse(line)),
    info: () => {},
    askPermission: async (tool, summary) => {
      asked.push([tool, summary]);
      return answer;
    },
  };
  return { driver: claudeStreamDriver(io), written, asked };
}

const canUseTool = (id: string, tool = "Bash", input: unknown = { command: "echo hi > perm.txt" }) =>
  JSON.stringify({
    type: "control_request",
    request_id: id,
    request: { subtype: "can_use_tool", tool_name: tool, input, description: "echo hi > perm.txt" },
  });

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("claude stream-json session: permission prompts go to the parent", () => {
  it("allow answers with the tool's input unchanged", async () => {
    const h = harness("allow");
    expect(h.driver.line(canUseTool("r1"))).toBe(true);
    await tick();
    expect(h.asked).toEqual([["Bash", "echo hi > perm.txt"]]);
    expect(h.written).toEqual([
      {
        type: "control_response",
        response: {
          subtype: "success",
          request_id: "r1",
          response: { behavior: "allow", updatedInput: { command: "echo hi > perm.txt" } },
        },
      },
    ]);
  });

  it("allow_always adds a rule for this session only; deny carries a message for the model", async () => {
    const always = harness("allow_always");
    always.driver.line(canUseTool("r2", "WebFetch", { url: "http://x" }));
    await tick();
    const r = (always.written[0]!.response as { response: Record<string, unknown> }).response;
    expect(r.updatedPermissions).toEqual([
      { type: "addRules", rules: [{ toolName: "WebFetch" }], behavior: "allow", destination: "session" },
    ]);
    const deny = harness("deny");
    deny.driver.line(canUseTool("r3"));
    await tick();
    const d = (deny.written[0]!.response as { response: Record<string, unknown> }).response;
    expect(d.behavior).toBe("deny");
    expect(d.message).toMatch(/parent denied/);
  });

  it("a refusal the parent decided is not reported again from the result's permission_denials", async () => {
    const h = harness("deny");
    const got: AgentMessage[] = [];
    const turn = h.driver.prompt("go", (m) => got.push(m));
    h.driver.line(canUseTool("r4"));
    await tick();
    h.driver.line(
      JSON.stringify({
        type: "result",
        subtype: "success",
        is_error: false,
        result: "done",
        session_id: "s1",
        usage: {},
        permission_denials: [{ tool_name: "Bash" }, { tool_name: "Write" }],
      }),
    );
    await turn;
    // Bash went through the parent; Write was refused without a prompt, and still says so.
    expect(got.filter((m) => m.type === "permission")).toEqual([
      { type: "permission", state: "denied", tool: "Write" },
    ]);
  });

  it("permissions: ask drops the default pre-approval and acceptEdits, and asks through stdio", () => {
    const base: TurnInput = {
      turnId: "t",
      prompt: "p",
      promptFile: "/tmp/p",
      cwd: "/tmp",
      env: {},
      runnerDir: "/tmp/r",
    };
    const plain = claudeRunner.session!(base)!.argv;
    expect(plain).toContain("acceptEdits");
    expect(plain).not.toContain("--permission-prompt-tool");
    const ask = claudeRunner.session!({ ...base, permissions: "ask" })!.argv;
    expect(ask).not.toContain("acceptEdits");
    expect(ask).not.toContain("--allowedTools");
    expect(ask.join(" ")).toContain("--permission-prompt-tool stdio");
    const listed = claudeRunner.session!({ ...base, permissions: "ask", tools: ["Read"] })!.argv;
    expect(listed.join(" ")).toContain("--allowedTools Read");
  });
});

describe("permissions: ask for the ACP CLIs: prompts on, the profile's tools still pre-approved", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });
  const input = (extra: Partial<TurnInput>): TurnInput => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-permrun-"));
    dirs.push(dir);
    return { turnId: "t", prompt: "p", promptFile: "/tmp/p", cwd: dir, env: {}, runnerDir: dir, ...extra };
  };

  it("gemini: approval mode default instead of yolo; listed tools go to tools.allowed", () => {
    expect(geminiRunner.session!(input({}))!.argv).toContain("yolo");
    const spec = geminiRunner.session!(input({ permissions: "ask", tools: ["run_shell_command"] }))!;
    expect(spec.argv.join(" ")).toContain("--approval-mode default");
    const settings = JSON.parse(fs.readFileSync(spec.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH!, "utf8"));
    expect(settings.tools).toEqual({ core: ["run_shell_command"], allowed: ["run_shell_command"] });
  });

  it("opencode: bash, edit and webfetch ask, except the ones the profile lists", () => {
    const config = (extra: Partial<TurnInput>) =>
      JSON.parse(opencodeRunner.session!(input(extra))!.env.OPENCODE_CONFIG_CONTENT!).permission;
    expect(config({})).toEqual({ bash: "allow", edit: "allow", webfetch: "allow" });
    expect(config({ permissions: "ask" })).toEqual({ bash: "ask", edit: "ask", webfetch: "ask" });
    expect(config({ permissions: "ask", tools: ["Bash", "read"] })).toEqual({
      bash: "allow",
      edit: "ask",
      webfetch: "ask",
    });
  });
});
