import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-snap");

async function runningWithOpenTool(prompt: string): Promise<{ id: string; dir: string }> {
  const s = await sb.json(["spawn", prompt]);
  expect(s.exitCode, s.stderr).toBe(0);
  const dir = s.data.artifactDir as string;
  await until(() => readEvents(dir).some((e) => e.type === "tool_activity" && e.phase === "start"), 20_000);
  return { id: s.data.id, dir };
}

describe("muster cancel --snapshot", () => {
  it("keeps the bounded last context (0600), status shows it, and spawn --resume continues from it", async () => {
    // Two tools over 60 s: the first tool call stays open for 15 s.
    const c = await runningWithOpenTool("refactor the parser\nmock: sleep=60 tools=2");
    const r = await sb.json(["cancel", "--snapshot", c.id]);
    expect(r.exitCode, r.stderr).toBe(0);
    const file = r.data.cancelled[0].snapshot as string;
    expect(path.dirname(file)).toBe(path.join(c.dir, "snapshots"));
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const snap = JSON.parse(fs.readFileSync(file, "utf8"));
    const turnId = readEvents(c.dir).find((e) => e.type === "turn_started")!.turnId;
    expect(snap).toMatchObject({
      v: 1,
      turnId,
      running: true,
      openTool: { name: "read_file", summary: "step 1 of 2" },
    });
    expect(snap.prompt).toContain("refactor the parser");
    expect(snap.answerTail).toContain("Looking at the task");
    expect(snap.pane).toContain("read_file");
    expect(fs.statSync(file).size).toBeLessThan(64 * 1024);
    // The turn was cancelled as ever.
    expect(readEvents(c.dir).find((e) => e.type === "completion")).toMatchObject({ status: "cancelled" });

    const st = await sb.json(["status", c.id]);
    expect(st.data.snapshot).toMatchObject({
      path: file,
      turnId,
      running: true,
      openTool: "read_file step 1 of 2",
    });
    expect((await sb.run(["status", c.id])).stdout).toMatch(/snapshot {3}.*open tool: read_file/);

    // No turn of it ever completed: only the snapshot makes it resumable.
    const resumed = await sb.json(["spawn", "--resume", c.id, "--wait", "--timeout", "30s", "carry on"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.data.results[0].status).toBe("completed");
    const next = resumed.data.resumed.turnId as string;
    // The prompt stays exact; the runner got the snapshot ahead of it.
    expect(fs.readFileSync(path.join(c.dir, "prompts", `${next}.txt`), "utf8")).toBe("carry on");
    const runnerPrompt = fs.readFileSync(path.join(c.dir, "prompts", `${next}.runner.txt`), "utf8");
    expect(runnerPrompt).toContain("Your previous turn was cancelled");
    expect(runnerPrompt).toContain("refactor the parser");
    expect(runnerPrompt).toContain("A tool call was open: read_file step 1 of 2");
    expect(runnerPrompt.endsWith("The new request:\n\ncarry on")).toBe(true);
    await sb.run(["cancel", c.id]);
  });

  it("without --snapshot nothing is kept, and a child whose only turn was cancelled is not resumable", async () => {
    const c = await runningWithOpenTool("plain cancel\nmock: sleep=60 tools=2");
    const r = await sb.json(["cancel", c.id]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.cancelled[0].snapshot).toBeUndefined();
    expect(fs.existsSync(path.join(c.dir, "snapshots"))).toBe(false);
    expect((await sb.json(["status", c.id])).data.snapshot).toBeUndefined();
    const resumed = await sb.run(["spawn", "--resume", c.id, "carry on"]);
    expect(resumed.exitCode).not.toBe(0);
    expect(resumed.stderr).toContain("not resumable");
  });

  it("an idle child's snapshot is kept and shown, but a resume does not present it as cancelled work", async () => {
    const s = await sb.json(["spawn", "--wait", "first task"]);
    expect(s.exitCode, s.stderr).toBe(0);
    const id = s.data.spawned.id as string;
    const dir = s.data.results[0].artifactDir as string;
    const r = await sb.json(["cancel", "--snapshot", id]);
    expect(r.data.cancelled[0].snapshot).toBeDefined();
    expect((await sb.json(["status", id])).data.snapshot).toMatchObject({ running: false });
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "--timeout", "30s", "second task"]);
    expect(resumed.data.results[0].status).toBe("completed");
    const next = resumed.data.resumed.turnId as string;
    expect(fs.existsSync(path.join(dir, "prompts", `${next}.runner.txt`))).toBe(false);
    await sb.run(["cancel", id]);
  });
});
