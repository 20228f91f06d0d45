import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, pidAlive, readEvents, sleep, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-evrepl");

async function hangingChild(): Promise<{ id: string; dir: string; hostPid: number }> {
  const r = await sb.json(["spawn", "hang here\nmock: hang"]);
  expect(r.exitCode, r.stderr).toBe(0);
  const dir = r.data.artifactDir as string;
  await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 30_000);
  const hostPid = readEvents(dir).find((e) => e.type === "child_started")!.pid as number;
  return { id: r.data.id, dir, hostPid };
}

describe("events.ndjson replaced or deleted under a running child", () => {
  it("logs -f ends with one line when events.ndjson becomes a symlink, never a stack trace", async () => {
    const c = await hangingChild();
    const events = path.join(c.dir, "events.ndjson");
    const logs = execa(process.execPath, [BIN, "logs", "-f", c.id], {
      cwd: sb.cwd,
      env: sb.env,
      extendEnv: false,
      reject: false,
      timeout: 60_000,
    });
    let out = "";
    logs.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    await until(() => out.includes("turn 1"), 30_000);
    fs.renameSync(events, `${events}.keep`);
    fs.symlinkSync(`${events}.keep`, events);
    const r = await logs;
    expect(r.exitCode).not.toBe(0);
    const lines = String(r.stderr).trim().split("\n");
    expect(lines, String(r.stderr)).toHaveLength(1);
    expect(lines[0]).toContain(`refusing to read ${events}: it is a symbolic link`);
    fs.rmSync(events);
    fs.renameSync(`${events}.keep`, events);
  }, 120_000);

  it("a deleted events.ndjson is named by status; the healthy host and its pane are not closed as never started", async () => {
    const c = await hangingChild();
    const events = path.join(c.dir, "events.ndjson");
    const kept = fs.readFileSync(events);
    fs.rmSync(events);
    // A host not started 30 s after its spawn counts as stuck: only past that age could the probe misjudge it.
    const createdAt = Date.parse(
      (await sb.json(["ls"])).data.children.find((x: { id: string }) => x.id === c.id).createdAt,
    );
    await sleep(Math.max(0, createdAt + 31_000 - Date.now()));
    const st = await sb.run(["status", c.id]);
    expect(st.exitCode).not.toBe(0);
    expect(st.stderr.trim().split("\n")).toHaveLength(1);
    expect(st.stderr).toContain(`${events} is missing`);
    const w = await sb.run(["wait", c.id, "--timeout", "3s"]);
    expect(w.stderr).toContain(`${events} is missing`);
    const ls = await sb.json(["ls"]);
    expect(ls.data.children.find((x: { id: string }) => x.id === c.id).status).toBe("unreadable");
    expect(pidAlive(c.hostPid)).toBe(true);
    expect(fs.existsSync(events)).toBe(false);
    fs.writeFileSync(events, kept);
  }, 120_000);
});
