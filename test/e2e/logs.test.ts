import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-logs");

/** `muster logs -f` as a running process whose stdout is collected as it comes. */
function followLogs(id: string) {
  const proc = execa(process.execPath, [BIN, "logs", id, "-f"], {
    cwd: sb.cwd,
    env: sb.env,
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: 60_000,
  });
  const out = { text: "" };
  proc.stdout?.on("data", (d: Buffer) => {
    out.text += d.toString("utf8");
  });
  return { proc, out };
}

describe("muster logs", () => {
  it("prints a settled child's events as lines, its answer previewed; --json gives the records as stored", async () => {
    const reply = encodeURIComponent("first line\n\u001b]0;pwned\u0007 second line\n");
    const id = (await sb.json(["spawn", "--wait", `mock: tools=2 reply=${reply}`])).data.spawned.id as string;
    const r = await sb.run(["logs", id]);
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const bodies = lines.map((l) => l.replace(/^\d\d:\d\d:\d\d\.\d{3}\s+/, ""));
    expect(bodies[0]).toMatch(/^host started \(pid \d+, runner mock\)$/);
    expect(bodies).toContain("turn 1   ⚙ read_file step 1 of 2");
    expect(bodies).toContain("turn 1   ✓ grep step 2 done");
    expect(bodies.some((b) => /^turn 1 {3}usage \d+ in \/ \d+ out/.test(b))).toBe(true);
    expect(bodies.some((b) => /^turn 1 {3}completed in \d+s$/.test(b))).toBe(true);
    // The answer's first lines, each made visible: the escape is shown, never obeyed.
    expect(lines).toContain("  │ first line");
    expect(lines).toContain("  │ ␛]0;pwned␇ second line");
    expect(r.stdout).not.toContain("\u001b");

    const j = await sb.run(["logs", id, "--json"]);
    const records = j.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    expect(records).toEqual(readEvents(dir));

    // A forged completion whose output path leaves the artifact dir: nothing outside is read.
    const eventsFile = path.join(dir, "events.ndjson");
    const original = fs.readFileSync(eventsFile);
    const secret = path.join(path.dirname(sb.home), "secret.txt");
    fs.writeFileSync(secret, "do not print me\n");
    const output = { path: path.relative(dir, secret), bytes: 16, sha256: "0".repeat(64) };
    fs.appendFileSync(
      eventsFile,
      `${JSON.stringify({ ...records.findLast((r) => r.type === "completion"), seq: 999, output })}\n`,
    );
    try {
      const hostile = await sb.run(["logs", id]);
      expect(hostile.stdout).not.toContain("do not print me");
      expect(hostile.stdout).toMatch(/answer unreadable: snapshot path .* is not outputs\/<eventId>\.md/);
    } finally {
      fs.writeFileSync(eventsFile, original);
    }
    await sb.run(["cancel", id]);
  });

  it("-f prints events as they come and ends (0) once the child's host exits", async () => {
    const id = (await sb.json(["spawn", "slow\nmock: sleep=4 tools=2"])).data.id as string;
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    const { proc, out } = followLogs(id);
    // A tool line is printed while the turn is still open: followed live, not read at the end.
    await until(() => out.text.includes("⚙ read_file"), 20_000, 50);
    expect(readEvents(dir).some((e) => e.type === "completion")).toBe(false);
    await until(() => /completed in \d+s/.test(out.text), 20_000, 50);
    expect(proc.exitCode).toBeNull();
    await sb.run(["cancel", id]);
    const r = await proc;
    expect(r.exitCode).toBe(0);
    expect(out.text.trimEnd().split("\n").at(-1)).toMatch(/host exited \(closed/);
  });

  it("-f on a child whose host dies without a word: settled lost, then the follow ends", async () => {
    const id = (await sb.json(["spawn", "mock: hang"])).data.id as string;
    await until(async () => (await sb.json(["status", id])).data.status === "running", 20_000, 100);
    const { proc, out } = followLogs(id);
    await until(() => out.text.includes("hanging until cancelled"), 20_000, 50);
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    const pid = readEvents(dir).find((e) => e.type === "child_started")!.pid as number;
    process.kill(pid, "SIGKILL");
    const r = await proc;
    expect(r.exitCode).toBe(0);
    expect(out.text).toMatch(/turn 1 {3}lost · child host \(pid \d+\) is gone/);
    expect(out.text.trimEnd().split("\n").at(-1)).toMatch(/host exited \(lost/);
  });

  it("Ctrl-C ends -f with 130 and leaves the child running; a bad id is one line, exit 2", async () => {
    const id = (await sb.json(["spawn", "--name", "stays", "mock: hang"])).data.id as string;
    const { proc, out } = followLogs("stays");
    await until(() => out.text.includes("runner started"), 20_000, 50);
    proc.kill("SIGINT");
    expect((await proc).exitCode).toBe(130);
    expect((await sb.json(["status", id])).data.status).toBe("running");
    await sb.run(["cancel", id]);

    const bad = await sb.run(["logs", "../../etc"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect(fs.existsSync(path.join(sb.cwd, "..", "etc"))).toBe(false);
  });
});
