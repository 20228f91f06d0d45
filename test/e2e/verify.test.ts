import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadSession, sessionFileOf } from "../../src/sessions/store.js";
import {
  processesMentioning,
  REPO,
  readEvents,
  until,
  useSandbox,
  writeProjectAgent,
} from "../helpers/cli.js";
import { withTop } from "../helpers/far-views.js";
import { makeRepo } from "../helpers/git-repo.js";

const sb = useSandbox("mt-verify");
const FIXER = path.join(REPO, "test", "fixtures", "fixing-agent.mjs");

/** A project agent that writes fixed.txt only once muster tells it what its check said. */
function writeFixer(extra: string[] = []): void {
  writeProjectAgent(sb, "fixer", [
    "runner: command",
    "protocol: muster-jsonl",
    `command: ${JSON.stringify([process.execPath, FIXER, "{prompt_file}"])}`,
    ...extra,
  ]);
}

const verifyEvents = (dir: string) => readEvents(dir).filter((e) => e.type.startsWith("verify_"));

describe("acceptance gates: a turn is completed only when its check passes", () => {
  it("a failed check goes back to the same child as a correction, and the turn completes once it passes", async () => {
    writeFixer();
    fs.rmSync(path.join(sb.cwd, "fixed.txt"), { force: true });
    const r = await sb.json([
      "spawn",
      "--agent",
      "fixer",
      "--verify",
      "test -f fixed.txt || { echo 'fixed.txt is missing'; exit 3; }",
      "--verify-retries",
      "2",
      "--wait",
      "make the check pass",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const res = r.data.results[0];
    expect(res.status).toBe("completed");
    expect(res.text).toBe("fixed it");
    expect(res.verified).toMatchObject({ exitCode: 0, attempts: 2 });
    expect(res.verified.command).toContain("test -f fixed.txt");
    const ev = verifyEvents(res.artifactDir);
    expect(ev.map((e) => [e.type, e.attempt, e.exitCode ?? null, e.retrying ?? null])).toEqual([
      ["verify_started", 1, null, null],
      ["verify_finished", 1, 3, true],
      ["verify_started", 2, null, null],
      ["verify_finished", 2, 0, false],
    ]);
    expect(ev[1]!.outputTail).toContain("fixed.txt is missing");
    // The correction is part of the conversation: the first answer, then muster's message with the check's output.
    const s = loadSession(sessionFileOf(res.artifactDir));
    const said = s.messages.filter((m) => m.role !== "system").map((m) => m.role);
    expect(said).toEqual(["user", "assistant", "user", "assistant"]);
    const correction = s.messages.find((m) => m.role === "user" && m.metadata.source === "verify");
    expect(correction?.text).toContain("fixed.txt is missing");
    expect(fs.existsSync(path.join(res.artifactDir, "prompts", `${res.turnId}.verify-1.txt`))).toBe(true);
    // One turn for the parent: one turn_started, one completion.
    const all = readEvents(res.artifactDir);
    expect(all.filter((e) => e.type === "turn_started")).toHaveLength(1);
    expect(all.filter((e) => e.type === "completion")).toHaveLength(1);
  });

  it("with no corrections left the turn settles failed_verification (exit 6) with the check's output as evidence", async () => {
    writeFixer();
    const r = await sb.run([
      "spawn",
      "--agent",
      "fixer",
      "--verify",
      "echo 'expected 4, got 5' >&2; exit 1",
      "--wait",
      "try once",
    ]);
    expect(r.exitCode, r.stderr).toBe(6);
    expect(r.stderr).toContain("failed_verification");
    expect(r.stderr).toContain("exited 1");
    expect(r.stderr).toContain("expected 4, got 5");
    const id = (await sb.json(["ls"])).data.children.at(-1).id as string;
    const status = await sb.json(["status", id]);
    const turn = status.data.turnList.at(-1);
    expect(turn.status).toBe("failed_verification");
    expect(turn.verified).toMatchObject({ exitCode: 1, attempts: 1 });
    expect(turn.verified.outputTail).toContain("expected 4, got 5");
    const text = (await sb.run(["status", id])).stdout;
    expect(text).toMatch(/verify echo 'expected 4, got 5' >&2; exit 1: exit 1/);
    expect(text).toContain("│ expected 4, got 5");
    // top: the state, and the last line the check printed as evidence.
    await withTop(sb, async ({ row }) => {
      const line = await until(() => row(id)?.includes("expected 4, got 5") && row(id), 10_000).catch((e) => {
        throw new Error(`${e.message}: ${row(id)}`);
      });
      expect(line).toContain("waiting-input");
    });
  });

  it("the mock's live session takes the correction too; a follow-up turn is checked again", async () => {
    const counter = path.join(sb.cwd, "runs");
    fs.rmSync(counter, { force: true });
    // Fails on its first run, passes on every later one.
    const check = `n=$(cat runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > runs; [ "$n" -ge 2 ]`;
    const r = await sb.json(["spawn", "--verify", check, "--verify-retries", "1", "--wait", "count"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.results[0].verified.attempts).toBe(2);
    const id = r.data.spawned.id as string;
    const next = await sb.json(["send", id, "--wait", "again"]);
    expect(next.exitCode, next.stderr).toBe(0);
    expect(next.data.results[0].verified).toMatchObject({ exitCode: 0, attempts: 1 });
    expect(fs.readFileSync(counter, "utf8").trim()).toBe("3");
  });

  it("a check past its time bound is killed, and the turn fails saying so", async () => {
    const r = await sb.json([
      "spawn",
      "--verify",
      "sleep 37.5",
      "--verify-timeout",
      "1s",
      "--wait",
      "slow check",
    ]);
    expect(r.exitCode, r.stderr).toBe(6);
    const res = r.data.results[0];
    expect(res.status).toBe("failed_verification");
    expect(res.verified).toMatchObject({ timedOut: true, exitCode: null });
    expect(res.reason).toContain("did not finish within 1 s");
    await until(() => processesMentioning("sleep 37.5").length === 0, 5000);
  });

  it("a cancel while the check runs stops it and settles the turn cancelled", async () => {
    const r = await sb.json(["spawn", "--verify", "sleep 41.5", "hold"]);
    const id = r.data.id as string;
    const dir = r.data.artifactDir as string;
    await until(() => readEvents(dir).some((e) => e.type === "verify_started"));
    const live = await sb.json(["status", id]);
    expect(live.data.live.detail).toContain("verifying: sleep 41.5");
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    const done = await until(() => readEvents(dir).find((e) => e.type === "completion"));
    expect(done.status).toBe("cancelled");
    await until(() => processesMentioning("sleep 41.5").length === 0, 5000);
  });

  it("a worktree child's check runs in its worktree", async () => {
    const repo = makeRepo(path.join(sb.cwd, "repo"));
    const r = await sb.json([
      "spawn",
      "--cwd",
      repo.dir,
      "--isolation",
      "worktree",
      "--verify",
      "pwd; exit 2",
      "--wait",
      "where",
    ]);
    expect(r.exitCode, r.stderr).toBe(6);
    const res = r.data.results[0];
    const meta = JSON.parse(fs.readFileSync(path.join(res.artifactDir, "meta.json"), "utf8"));
    expect(meta.cwd).not.toBe(repo.dir);
    expect(res.verified.outputTail.trim()).toBe(fs.realpathSync(meta.cwd));
  });

  it("a profile's verify: applies, and the call's fields win over it one by one", async () => {
    writeFixer(["verify:", "  command: test -f fixed.txt", "  retries: 0", "  timeout: 30s"]);
    fs.rmSync(path.join(sb.cwd, "fixed.txt"), { force: true });
    const strict = await sb.json(["spawn", "--agent", "fixer", "--wait", "profile check"]);
    expect(strict.exitCode).toBe(6);
    const meta = JSON.parse(
      fs.readFileSync(path.join(strict.data.results[0].artifactDir, "meta.json"), "utf8"),
    );
    expect(meta.verify).toEqual({
      argv: ["sh", "-c", "test -f fixed.txt"],
      command: "test -f fixed.txt",
      retries: 0,
      timeoutMs: 30_000,
    });
    fs.rmSync(path.join(sb.cwd, "fixed.txt"), { force: true });
    const lenient = await sb.json(["spawn", "--agent", "fixer", "--verify-retries", "1", "--wait", "again"]);
    expect(lenient.exitCode, lenient.stderr).toBe(0);
    expect(lenient.data.results[0].verified.attempts).toBe(2);
  });

  it("bad verify options are refused in one line and create nothing", async () => {
    const count = async () => (await sb.json(["ls"])).data.children.length as number;
    const before = await count();
    const refused: [string[], string][] = [
      [["--verify-retries", "2"], "give verify a command"],
      [["--verify", "true", "--verify-retries", "x"], "--verify-retries must be a whole number"],
      [["--verify", "true", "--verify-retries", "11"], "from 0 to 10"],
      [["--verify", "   "], "verify needs a command"],
      [["--verify", "true", "--verify-timeout", "soon"], "--verify-timeout"],
    ];
    for (const [flags, said] of refused) {
      const r = await sb.run(["spawn", ...flags, "task"]);
      expect(r.exitCode, flags.join(" ")).toBe(2);
      expect(r.stderr).toContain(said);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
    const id = (await sb.json(["spawn", "--wait", "plain"])).data.spawned.id as string;
    const resumed = await sb.run(["spawn", "--resume", id, "--verify", "true", "more"]);
    expect(resumed.exitCode).toBe(2);
    expect(resumed.stderr).toContain("--verify is set when a child is spawned");
    expect(await count()).toBe(before + 1);
  });

  it("a workflow step's verify gates the step: a failed check fails it, and the steps after it are skipped", async () => {
    writeFixer();
    fs.rmSync(path.join(sb.cwd, "fixed.txt"), { force: true });
    const file = path.join(sb.cwd, "gated.toml");
    const steps = (checked: string, retries: number) =>
      [
        'name = "gated"',
        "[[steps]]",
        'id = "build"',
        'agent = "fixer"',
        'prompt = "build: {{input}}"',
        `verify = { command = ${JSON.stringify(checked)}, retries = ${retries}, timeout = "30s" }`,
        "[[steps]]",
        'id = "after"',
        'agent = "mock"',
        'needs = ["build"]',
        'prompt = "after"',
        "",
      ].join("\n");
    fs.writeFileSync(file, steps("test -f fixed.txt", 0));
    const failed = await sb.json(["workflow", "run", file, "x"]);
    expect(failed.data.status).toBe("failed");
    expect(failed.data.steps.map((st: { status: string }) => st.status)).toEqual([
      "failed_verification",
      "skipped",
    ]);
    fs.writeFileSync(file, steps("test -f fixed.txt", 1));
    const fixed = await sb.json(["workflow", "run", file, "x"]);
    expect(fixed.exitCode, fixed.stderr).toBe(0);
    expect(fixed.data.steps.map((st: { status: string }) => st.status)).toEqual(["completed", "completed"]);
    fs.writeFileSync(file, steps("true", 0).replace('timeout = "30s"', "colour = 1"));
    const bad = await sb.run(["workflow", "run", file, "x"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('verify: unknown key "colour"');
  });
});
