import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";
import { loadValidators } from "../helpers/schema.js";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string) => /prompt-sha256: ([0-9a-f]{64})/.exec(text)?.[1];

const sb = useSandbox("mt-life");

describe("a child's life through the real CLI and tmux", () => {
  it("spawn returns the id at once; wait, result, ls, status and capture report the turn", async () => {
    const prompt = "Summarise the repo\nmock: sleep=1 tools=2";
    const spawned = await sb.run(["spawn", "--agent", "mock", prompt]);
    expect(spawned.exitCode).toBe(0);
    const id = spawned.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const ls1 = await sb.json(["ls"]);
    expect(ls1.data.children.map((c: { id: string }) => c.id)).toContain(id);

    const waited = await sb.run(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode).toBe(0);
    expect(shaIn(waited.stdout)).toBe(sha(prompt));

    const result = await sb.run(["result", id]);
    expect(result.stdout).toBe(waited.stdout);

    expect((await sb.json(["status", id.slice(-8)])).data.id).toBe(id); // the short id is the tail
    const status = await sb.json(["status", id.slice(0, 8)]);
    expect(status.data.status).toBe("idle");
    expect(status.data.lastOutcome).toBe("completed");
    expect(status.data.turnList).toHaveLength(1);
    expect(status.data.pane.paneId).toMatch(/^%\d+$/);
    expect(status.data.usage.input).toBeGreaterThan(0);

    const cap = await sb.run(["capture", id, "--lines", "50"]);
    expect(cap.stdout).toContain("read_file");
    expect(cap.stdout).toContain("completed");

    // Every record the child wrote satisfies the protocol's schemas.
    const v = loadValidators();
    const dir = status.data.artifactDir as string;
    expect(v.validateMeta(JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8")))).toEqual([]);
    const lines = fs.readFileSync(path.join(dir, "events.ndjson"), "utf8").trim().split("\n");
    const types = lines.map((l) => JSON.parse(l).type);
    expect(types).toEqual([
      "child_started",
      "turn_started",
      "runner_started",
      "tool_activity",
      "tool_activity",
      "tool_activity",
      "tool_activity",
      "usage",
      "completion",
    ]);
    for (const l of lines) expect(v.validateEvent(JSON.parse(l))).toEqual([]);
    expect(fs.existsSync(path.join(dir, "env.json"))).toBe(false);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(dir, "events.ndjson")).mode & 0o777).toBe(0o600);
  });

  it("spawn --wait prints the result; send runs the next turn in the same pane", async () => {
    const first = await sb.json(["spawn", "--wait", "first question"]);
    expect(first.exitCode).toBe(0);
    const id = first.data.spawned.id as string;
    expect(shaIn(first.data.results[0].text)).toBe(sha("first question"));

    const sent = await sb.run(["send", id, "second question", "--wait"]);
    expect(sent.exitCode).toBe(0);
    expect(shaIn(sent.stdout)).toBe(sha("second question"));

    const status = await sb.json(["status", id]);
    expect(status.data.turnList.map((t: { status: string }) => t.status)).toEqual(["completed", "completed"]);
    expect(status.data.pane.paneId).toBe(first.data.spawned.paneId);
    const turn1 = status.data.turnList[0].turnId as string;
    const r1 = await sb.run(["result", id, "--turn", turn1]);
    expect(shaIn(r1.stdout)).toBe(sha("first question"));
  });

  it("a line typed into the pane becomes the next turn", async () => {
    const s = await sb.json(["spawn", "--wait", "before typing"]);
    const id = s.data.spawned.id as string;
    const { execa } = await import("execa");
    await execa("tmux", [
      "-L",
      sb.socket,
      "send-keys",
      "-t",
      s.data.spawned.paneId,
      "typed by a person",
      "Enter",
    ]);
    const { until } = await import("../helpers/cli.js");
    await until(
      async () =>
        (await sb.json(["status", id])).data.turnList.length === 2 &&
        (await sb.json(["status", id])).data.status === "idle",
      15_000,
      100,
    );
    const r = await sb.run(["result", id]);
    expect(shaIn(r.stdout)).toBe(sha("typed by a person"));
    const st = await sb.json(["status", id]);
    expect(st.data.turnList[1].source).toBe("typed");
  });

  it("exit codes follow the outcome: errored 1, timeout 124, first/all", async () => {
    const failed = await sb.run(["spawn", "--wait", "mock: exit=7"]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toMatch(/errored: exit code 7/);

    const slow = (await sb.run(["spawn", "mock: sleep=20"])).stdout.trim();
    const quick = (await sb.run(["spawn", "mock: sleep=0.3"])).stdout.trim();
    const timed = await sb.run(["wait", slow, "--timeout", "500ms"]);
    expect(timed.exitCode).toBe(124);
    const first = await sb.json(["wait", slow, quick, "--first", "--timeout", "20s"]);
    expect(first.exitCode).toBe(0);
    expect(first.data.results.map((r: { id: string }) => r.id)).toEqual([quick]);
    expect(first.data.pending).toEqual([slow]);
    const cancelled = await sb.run(["cancel", slow]);
    expect(cancelled.exitCode).toBe(0);
    const after = await sb.run(["wait", slow]);
    expect(after.exitCode).toBe(3);
    // A closed child takes no follow-up; the error says how to go on, as a command: no turn of this one
    // completed, so not resume (that would fail "not resumable") but a new child (test/e2e/hints.test.ts).
    const send = await sb.run(["send", slow, "more"]);
    expect(send.exitCode).not.toBe(0);
    expect(send.stderr).toMatch(
      /has exited; no turn of it completed.*start a new one: (npx )?muster spawn --agent mock "…"/,
    );
  });

  it("the command runner runs any argv; stdout is the answer", async () => {
    const r = await sb.run([
      "spawn",
      "--agent",
      "command",
      "--json",
      "--wait",
      "hello from argv",
      "--",
      process.execPath,
      "-e",
      "process.stdout.write('got:' + process.argv[1])",
      "{prompt}",
    ]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).results[0].text).toBe("got:hello from argv");
    const missing = await sb.run(["spawn", "--agent", "command", "--wait", "x", "--", "/nonexistent/tool"]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain("command not found");
  });

  it("every command answers --json with one document and has help", async () => {
    for (const cmd of [
      "spawn",
      "ls",
      "status",
      "wait",
      "result",
      "send",
      "cancel",
      "attach",
      "focus",
      "capture",
      "doctor",
      "demo",
    ]) {
      const h = await sb.run([cmd, "--help"]);
      expect(h.exitCode, cmd).toBe(0);
      expect(h.stdout, cmd).toContain("--json");
    }
    const doctor = await sb.json(["doctor"]);
    expect(doctor.data.tmux.ok).toBe(true);
    expect(doctor.data.runners.map((r: { name: string }) => r.name)).toEqual(
      expect.arrayContaining(["mock", "command"]),
    );
    const top = await sb.run(["--help"]);
    expect(top.stdout).toContain("Exit codes");
    const child = (await sb.json(["ls"])).data.children[0].id as string;
    const attach = await sb.json(["attach", child]);
    expect(attach.data.command).toEqual(expect.arrayContaining(["tmux", "-L", sb.socket, "attach-session"]));
  });
});
