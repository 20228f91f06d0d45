import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";
import { autogroupNice } from "../helpers/sleepers.js";

const sb = useSandbox("mt-reap");
const AGENT = path.join(REPO, "test", "fixtures", "late-exit-agent.mjs");

/** A command agent speaking muster's protocol that sleeps `ms` after its final record, then exits `code`. */
function lateAgent(name: string, ms: number, code: number): string {
  const agents = path.join(sb.cwd, ".muster", "agents");
  fs.mkdirSync(agents, { recursive: true });
  const command = [process.execPath, AGENT, "{prompt_file}", String(ms), String(code)];
  fs.writeFileSync(
    path.join(agents, `${name}.md`),
    `---\ndescription: lingers after its result\nrunner: command\nprotocol: muster-jsonl\ncommand: ${JSON.stringify(command)}\n---\nLate.\n`,
  );
  return name;
}

async function spawnLate(agent: string, prompt: string) {
  const r = await sb.run(["spawn", "--agent", agent, prompt]);
  expect(r.exitCode, r.stderr).toBe(0);
  const id = r.stdout.trim();
  const dir = (await sb.json(["status", id])).data.artifactDir as string;
  return { id, dir };
}

const byType = (dir: string, type: string) => readEvents(dir).filter((e) => e.type === type);

describe("a turn settles on the runner's final record; the process is reaped after", () => {
  it("the completion comes while the runner still runs; its late non-zero exit is an event after it; a follow-up starts after the reap", async () => {
    const c = await spawnLate(lateAgent("late-exit", 1500, 3), "one");
    const done = await until(() => byType(c.dir, "completion")[0], 20_000, 20);
    const runnerPid = byType(c.dir, "runner_started")[0].pid as number;
    // Right after the completion the runner is still there: the turn did not wait for it.
    expect(pidAlive(runnerPid)).toBe(true);
    expect(done).toMatchObject({ status: "completed", exitCode: null, signal: null, output: { bytes: 14 } });
    // A follow-up sent at once is queued until the first runner is gone.
    expect((await sb.run(["send", c.id, "two"])).exitCode).toBe(0);
    const w = await sb.json(["wait", c.id, "--timeout", "30s"]);
    expect(w.data.results[0].status).toBe("completed");
    expect(w.data.results[0].text).toMatch(/The new request:\n\ntwo\n$/);
    const events = readEvents(c.dir);
    const seq = (pred: (e: Record<string, unknown>) => boolean) => events.find(pred)?.seq as number;
    const t1 = done.turnId as string;
    const exited = events.find((e) => e.type === "runner_exited" && e.turnId === t1);
    expect(exited).toMatchObject({ pid: runnerPid, exitCode: 3, signal: null, killed: false });
    expect(seq((e) => e.type === "completion" && e.turnId === t1)).toBeLessThan(exited!.seq);
    expect(exited!.seq).toBeLessThan(seq((e) => e.type === "turn_started" && e.turnId !== t1));
    // The late exit changed nothing about turn 1.
    expect(events.filter((e) => e.type === "completion" && e.turnId === t1)).toEqual([done]);
    expect((await sb.run(["cancel", c.id])).exitCode).toBe(0);
  });

  it("a runner past its final record winds down at the lowest priority; its host keeps its own (the next runner starts from it)", async () => {
    const c = await spawnLate(lateAgent("late-low", 1500, 0), "one");
    const done = await until(() => byType(c.dir, "completion")[0], 20_000, 20);
    expect(done).toMatchObject({ status: "completed" });
    const runnerPid = byType(c.dir, "runner_started")[0].pid as number;
    const hostPid = byType(c.dir, "child_started")[0].pid as number;
    // Lowered when the turn settled, before the completion was written: it is so by the time the completion is read.
    expect(os.getPriority(runnerPid)).toBe(os.constants.priority.PRIORITY_LOW);
    expect(os.getPriority(hostPid)).toBe(os.getPriority());
    // Where every session is a scheduling group (Linux's autogroups), the runner's session is lowered as a whole.
    if (fs.existsSync("/proc/self/autogroup")) {
      expect(autogroupNice(runnerPid)).toBe(19);
      expect(autogroupNice(hostPid)).toBe(0);
    }
    expect((await sb.run(["cancel", c.id])).exitCode).toBe(0);
  });

  it("a runner that does not exit after its final record is killed after the grace period, recorded as such", async () => {
    const c = await spawnLate(lateAgent("never-exits", 60_000, 0), "stay");
    const done = await until(() => byType(c.dir, "completion")[0], 20_000, 20);
    expect(done).toMatchObject({ status: "completed" });
    const runnerPid = byType(c.dir, "runner_started")[0].pid as number;
    const exited = await until(() => byType(c.dir, "runner_exited")[0], 10_000, 50);
    expect(exited).toMatchObject({ pid: runnerPid, signal: "SIGKILL", killed: true });
    expect(pidAlive(runnerPid)).toBe(false);
    // The child is idle again and takes the next turn.
    expect((await sb.json(["status", c.id])).data.status).toBe("idle");
    expect((await sb.run(["cancel", c.id])).exitCode).toBe(0);
  });
});
