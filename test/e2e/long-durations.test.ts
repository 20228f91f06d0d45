import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-long");
const DAYS_30_MS = 30 * 86_400_000;

/** Every budget.json of the sandbox (one primary here). */
const budgetFiles = (): string[] => {
  const root = path.join(sb.home, "primaries");
  return fs
    .readdirSync(root)
    .map((p) => path.join(root, p, "budget.json"))
    .filter((f) => fs.existsSync(f));
};

describe("durations longer than setTimeout can wait (about 24.8 days)", () => {
  it("caps and timeouts over 24d are refused with the limit, in one line, and create nothing", async () => {
    const idle = await sb.json(["spawn", "--wait", "an idle child"]);
    expect(idle.exitCode, idle.stderr).toBe(0);
    const id = idle.data.spawned.id as string;
    const before = (await sb.json(["ls"])).data.children.length;
    for (const [args, flag] of [
      [["spawn", "--max-time", "30d", "x"], "--max-time"],
      [["spawn", "--idle-timeout", "720h", "x"], "--idle-timeout"],
      [["budget", "--max-time", "30d"], "--max-time"],
      [["wait", id, "--timeout", "30d"], "--timeout"],
      [["send", id, "--wait", "--timeout", "25d", "x"], "--timeout"],
    ] as const) {
      const r = await sb.run([...args]);
      expect(r.exitCode, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`${flag} must be at most 24d`);
    }
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
    expect((await sb.json(["status", id])).data.turnList).toHaveLength(1);
    expect(budgetFiles()).toEqual([]);
  }, 180_000);

  it("24d is accepted and does not end the turn", async () => {
    const r = await sb.json(["spawn", "--wait", "--max-time", "24d", "--idle-timeout", "24d", "quick"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.results[0].status).toBe("completed");
  });

  it("a tree cap over the limit in budget.json (written elsewhere) does not end every turn at once", async () => {
    expect((await sb.run(["budget", "--max-time", "1h", "--idle-timeout", "1h"])).exitCode).toBe(0);
    const [file] = budgetFiles();
    const b = JSON.parse(fs.readFileSync(file!, "utf8"));
    b.caps = { maxTimeMs: DAYS_30_MS, idleTimeoutMs: DAYS_30_MS };
    fs.writeFileSync(file!, JSON.stringify(b));
    const r = await sb.json(["spawn", "--wait", "quick under a long tree cap\nmock: sleep=0.3"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.results[0]).toMatchObject({ status: "completed" });
    expect((await sb.run(["budget", "--clear"])).exitCode).toBe(0);
  });
});
