import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { AIDER_HISTORY, aiderParser, aiderRunner, aiderTokens } from "../../src/runners/aider/runner.js";
import type { AgentMessage, TurnInput } from "../../src/runners/types.js";

const STANDIN = fileURLToPath(new URL("../fixtures/aider-standin.mjs", import.meta.url));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A child's world: a cwd (the project) and its private runner folder, as the child host lays them out. */
function world() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-aider-"));
  dirs.push(root);
  const cwd = path.join(root, "project");
  fs.mkdirSync(cwd);
  return { root, cwd, runnerDir: path.join(root, "artifacts", "child", "runner") };
}

const baseEnv = (): Record<string, string> =>
  Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));

let turns = 0;
type Extra = Partial<Omit<TurnInput, "env">> & { env?: Record<string, string> };

/** Plans one aider turn, runs its argv for real (the stand-in as the binary) and reads stdout with its parser. */
function turn(w: ReturnType<typeof world>, prompt: string, extra: Extra = {}) {
  const turnId = `t${++turns}`;
  const promptFile = path.join(w.root, `${turnId}.txt`);
  fs.writeFileSync(promptFile, prompt);
  const { env, ...rest } = extra;
  const input: TurnInput = {
    turnId,
    prompt,
    promptFile,
    cwd: w.cwd,
    runnerDir: w.runnerDir,
    env: { ...baseEnv(), MUSTER_AIDER_BIN: STANDIN, ...env },
    ...rest,
  };
  const plan = aiderRunner.plan(input);
  const r = spawnSync(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
  });
  const lines = r.stdout.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const msgs: AgentMessage[] = lines.flatMap((l) => plan.parser!.line(l));
  msgs.push(...plan.parser!.end!({ code: r.status, signal: r.signal }));
  const of = <T extends AgentMessage["type"]>(type: T) =>
    msgs.filter((m): m is Extract<AgentMessage, { type: T }> => m.type === type);
  return {
    plan,
    msgs,
    status: r.status,
    stdout: r.stdout,
    stderr: r.stderr,
    text: of("text")
      .map((m) => m.text)
      .join(""),
    result: of("result")[0],
    usage: of("usage").map((m) => m.usage),
    tools: of("tool"),
    session: of("session")[0]?.id,
  };
}

describe("aider runner", () => {
  it("runs one headless turn: answer, usage, session, status lines kept out of the answer", () => {
    const w = world();
    const t = turn(w, "what is in this repo?");
    expect(t.stderr).toBe("");
    expect(t.status).toBe(0);
    expect(t.text).toBe("stand-in answer 1\n");
    expect(t.result).toEqual({ type: "result", status: "completed", text: "stand-in answer 1\n" });
    expect(t.usage).toEqual([{ input: 1200, output: 30, cost: 0.01 }]);
    expect(t.session).toBe(path.join(w.runnerDir, AIDER_HISTORY));
    const raw = t.msgs.filter((m) => m.type === "raw").map((m) => (m as { text: string }).text);
    expect(raw).toContain("Aider v0.86.1");
    expect(raw).toContain("Tokens: 1.2k sent, 30 received. Cost: $0.01 message, $0.02 session.");
    // The prompt travels in a file, never in argv; history files live in the runner folder.
    const argv = t.plan.argv;
    expect(argv[0]).toBe(STANDIN);
    expect(argv.slice(-2)).toEqual(["--message-file", path.join(w.root, "t1.txt")]);
    expect(argv).not.toContain("what is in this repo?");
    expect(argv).toEqual(expect.arrayContaining(["--yes-always", "--no-auto-commits", "--no-pretty"]));
    expect(argv[argv.indexOf("--input-history-file") + 1]).toBe(
      path.join(w.runnerDir, "aider.input.history"),
    );
    expect(argv).not.toContain("--restore-chat-history");
    expect(argv).not.toContain("--read");
    expect(argv).not.toContain("--model");
    expect(fs.readFileSync(path.join(w.runnerDir, AIDER_HISTORY), "utf8")).toContain(
      "#### what is in this repo?",
    );
    expect(aiderRunner.resumeMode?.(undefined)).toBe("native");
    expect(aiderRunner.catalog).toEqual({ provider: "aider", open: true, models: [] });
  });

  it("reports an applied edit as an edit tool call, and the file exists in the cwd", () => {
    const w = world();
    const t = turn(w, "please make the file out.txt");
    expect(t.status).toBe(0);
    expect(t.tools).toEqual([
      { type: "tool", phase: "start", name: "edit", summary: "out.txt" },
      { type: "tool", phase: "end", name: "edit", summary: "out.txt" },
    ]);
    expect(fs.readFileSync(path.join(w.cwd, "out.txt"), "utf8")).toBe("hello\n");
    expect(t.text).toContain("I will create out.txt.");
    expect(t.text).not.toContain("Applied edit");
    expect(t.result?.status).toBe("completed");
    expect(t.usage).toHaveLength(1);
  });

  it("resumes natively: turn 2 with the session restores aider's chat history", () => {
    const w = world();
    const first = turn(w, "first question");
    expect(first.session).toBeDefined();
    const second = turn(w, "second question", { runnerSessionId: first.session! });
    expect(second.plan.argv).toContain("--restore-chat-history");
    expect(second.text).toBe("stand-in answer 2\n");
    expect(second.msgs).toContainEqual({ type: "raw", text: "Restored previous conversation history." });
    expect(second.session).toBe(first.session);
    // Without the session the same folder starts a fresh conversation.
    expect(turn(w, "unrelated").text).toBe("stand-in answer 1\n");
  });

  it("fails with an errored result when aider exits non-zero without an answer", () => {
    const w = world();
    const t = turn(w, "anything", { env: { AIDER_STANDIN_FAIL: "1" } });
    expect(t.status).toBe(1);
    expect(t.stderr).toContain("simulated failure");
    expect(t.text).toBe("");
    expect(t.result).toEqual({
      type: "result",
      status: "errored",
      reason: "exit code 1: Error: the stand-in was told to fail (AIDER_STANDIN_FAIL=1)",
    });
  });

  it("treats an LLM error as a failure although aider exits 0", () => {
    const w = world();
    const t = turn(w, "anything", { env: { AIDER_STANDIN_FAIL: "llm" } });
    expect(t.status).toBe(0);
    expect(t.text).toBe("");
    expect(t.result).toEqual({
      type: "result",
      status: "errored",
      reason: "litellm.AuthenticationError: AnthropicException - invalid x-api-key",
      providerError: {
        kind: "auth",
        message: "litellm.AuthenticationError: AnthropicException - invalid x-api-key",
      },
    });
  });

  it("passes a prompt that starts with '-' safely", () => {
    const w = world();
    const prompt = "--model evil -m --read /etc/passwd";
    const t = turn(w, prompt);
    expect(t.status).toBe(0);
    expect(t.plan.argv).not.toContain(prompt);
    expect(t.plan.argv).not.toContain("evil");
    expect(t.text).toBe("stand-in answer 1\n");
    expect(fs.readFileSync(path.join(w.runnerDir, AIDER_HISTORY), "utf8")).toContain(`#### ${prompt}`);
  });

  it("passes instructions with --read, the model as provider/model and reasoning; hides the thinking", () => {
    const w = world();
    const t = turn(w, "hi", {
      systemPrompt: "  You are terse.\n",
      model: "anthropic:claude-sonnet-4-5",
      reasoning: "high",
    });
    expect(t.status).toBe(0);
    const argv = t.plan.argv;
    const instructions = path.join(w.runnerDir, "instructions.md");
    expect(argv[argv.indexOf("--read") + 1]).toBe(instructions);
    expect(fs.readFileSync(instructions, "utf8")).toBe("You are terse.\n");
    expect(argv[argv.indexOf("--model") + 1]).toBe("anthropic/claude-sonnet-4-5");
    expect(argv[argv.indexOf("--reasoning-effort") + 1]).toBe("high");
    expect(t.msgs).toContainEqual({ type: "raw", text: `Added ${instructions} to the chat (read-only).` });
    expect(t.msgs).toContainEqual({ type: "raw", text: "The stand-in thinks about it." });
    expect(t.text).toBe("stand-in answer 1\n");
    // Other spellings: a bare or already-slashed id as is; muster's own "aider:" prefix dropped.
    const spelled = (model: string) => {
      const a = aiderRunner.plan({
        turnId: "x",
        prompt: "p",
        promptFile: path.join(w.root, "x.txt"),
        cwd: w.cwd,
        runnerDir: w.runnerDir,
        env: {},
        model,
      }).argv;
      return a[a.indexOf("--model") + 1];
    };
    expect(spelled("openrouter/deepseek/deepseek-chat")).toBe("openrouter/deepseek/deepseek-chat");
    expect(spelled("sonnet")).toBe("sonnet");
    expect(spelled("aider:sonnet")).toBe("sonnet");
  });

  it("instructions.md planted as a FIFO or a symlink is replaced: no hang, the link's target untouched", () => {
    const w = world();
    fs.mkdirSync(w.runnerDir, { recursive: true });
    const instructions = path.join(w.runnerDir, "instructions.md");
    const victim = path.join(w.root, "victim.md");
    fs.writeFileSync(victim, "precious\n");
    const plant = [
      () => expect(spawnSync("mkfifo", [instructions]).status).toBe(0),
      () => fs.symlinkSync(victim, instructions),
    ];
    for (const planted of plant) {
      fs.rmSync(instructions, { force: true });
      planted();
      const p = aiderRunner.plan({
        turnId: "x",
        prompt: "p",
        promptFile: path.join(w.root, "x.txt"),
        cwd: w.cwd,
        runnerDir: w.runnerDir,
        env: {},
        systemPrompt: "Be terse.",
      });
      expect(p.argv[p.argv.indexOf("--read") + 1]).toBe(instructions);
      expect(fs.lstatSync(instructions).isFile()).toBe(true);
      expect(fs.readFileSync(instructions, "utf8")).toBe("Be terse.\n");
      expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    }
  });

  it("the stand-in refuses flags aider's runner does not pass (so the argv above is checked)", () => {
    for (const bad of [["--bogus"], ["--message-file"], ["file.py"], ["-m", "--yes-always"]]) {
      const r = spawnSync(STANDIN, bad, { stdio: ["ignore", "pipe", "pipe"], encoding: "utf8" });
      expect(r.status).toBe(2);
    }
  });
});

describe("aider stdout parser", () => {
  const feed = (lines: string[], code: number | null = 0, signal: string | null = null) => {
    const p = aiderParser("/nonexistent/aider.chat.history.md");
    return [...lines.flatMap((l) => p.line(l)), ...p.end!({ code, signal })];
  };

  it("reads aider's token counts", () => {
    expect(aiderTokens("850")).toBe(850);
    expect(aiderTokens("1.2k")).toBe(1200);
    expect(aiderTokens("12k")).toBe(12000);
  });

  it("joins a usage line with a cost on the next line, and reports one without cost", () => {
    const banner = ["Aider v0.86.1", "Model: x with diff edit format", ""];
    expect(
      feed([
        ...banner,
        "ok",
        "",
        "Tokens: 9.9k sent, 2.0k cache write, 5.0k cache hit, 99 received.",
        "Cost: $0.0012 message, $0.50 session.",
      ]).filter((m) => m.type === "usage"),
    ).toEqual([{ type: "usage", usage: { input: 9900, output: 99, cost: 0.0012 } }]);
    expect(
      feed([...banner, "ok", "Tokens: 100 sent, 7 received."]).filter((m) => m.type === "usage"),
    ).toEqual([{ type: "usage", usage: { input: 100, output: 7 } }]);
  });

  it("keeps blank lines inside the answer only, and a markdown rule that is not a reasoning marker", () => {
    const out = feed(["Aider v0.86.1", "", "", "a", "", "---", "b", "", "Tokens: 1 sent, 1 received."]);
    expect(out.at(-1)).toEqual({ type: "result", status: "completed", text: "a\n\n---\nb\n" });
    expect(out.some((m) => m.type === "session")).toBe(false);
  });

  it("leaves the reason to the exit status and stderr when stdout explains nothing", () => {
    const out = feed(["Aider v0.86.1", "Model: x with diff edit format", "Git repo: none", ""], 1);
    expect(out.filter((m) => m.type === "result")).toEqual([]);
    expect(feed(["Message file not found: /x"], 1).at(-1)).toEqual({
      type: "result",
      status: "errored",
      reason: "exit code 1: Message file not found: /x",
    });
  });
});
