import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-mem");
const AGENT = path.join(REPO, "test", "fixtures", "big-output.mjs");
const MB = 1024 * 1024;

/** The peak resident set of a live process, in bytes (Linux /proc). */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmHWM for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** Starts a child whose agent writes `bytes` (plain text, or muster JSONL text messages) and waits at a gate. */
async function spawnBig(format: "text" | "jsonl" | "stderr", bytes: number, gate: string): Promise<string> {
  const argv = [process.execPath, AGENT, String(bytes), gate, format];
  if (format !== "jsonl")
    return (await sb.run(["spawn", "--agent", "command", "big", "--", ...argv])).stdout.trim();
  const agents = path.join(sb.cwd, ".muster", "agents");
  fs.mkdirSync(agents, { recursive: true });
  fs.writeFileSync(
    path.join(agents, "big-jsonl.md"),
    `---\ndescription: writes a lot\nrunner: command\nprotocol: muster-jsonl\ncommand: ${JSON.stringify(argv)}\n---\nBig.\n`,
  );
  return (await sb.run(["spawn", "--agent", "big-jsonl", "big"])).stdout.trim();
}

describe("the child host's memory does not grow with the runner's output", () => {
  it.each([
    ["text", 200 * MB],
    ["jsonl", 100 * MB],
  ] as const)(
    "%s output of %d bytes: output_too_large, output.md holds all of it, the host stays under 100 MB",
    async (format, bytes) => {
      const gate = path.join(sb.cwd, `gate-${format}`);
      const id = await spawnBig(format, bytes, gate);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const dir = (await sb.json(["status", id])).data.artifactDir as string;
      // The spawn returns once the pane is open; the host records its start a moment later (later on a loaded machine).
      const started = await until(() => readEvents(dir).find((e) => e.type === "child_started"), 30_000);
      const hostPid = started.pid as number;
      await until(() => fs.existsSync(`${gate}.written`), 120_000, 100);
      // Streamed: while the runner still runs, output.md already holds what it wrote (the pipe holds ≤ 64 KiB more).
      const streamed = await until(
        () => fs.statSync(path.join(dir, "output.md")).size >= bytes - 256 * 1024,
        10_000,
        100,
      ).catch(() => false);
      fs.writeFileSync(gate, "");
      const w = await sb.json(["wait", id, "--timeout", "60s"]);
      // The host idles after the turn: its high-water mark covers the whole turn.
      const peak = peakRss(hostPid);
      const completion = readEvents(dir).find((e) => e.type === "completion");
      expect(completion).toMatchObject({
        status: "completed",
        outputError: { code: "output_too_large", bytes },
      });
      expect(w.data.results[0].status).toBe("completed");
      expect(fs.statSync(path.join(dir, "output.md")).size).toBe(bytes);
      expect(peak, `peak RSS ${Math.round(peak / MB)} MB`).toBeLessThan(100 * MB);
      expect(streamed).toBe(true);
      // The conversation keeps a bounded end of such an answer, not all of it.
      const conversation = path.join(dir, "..", "..", "subagents", `${id}.jsonl`);
      expect(fs.statSync(conversation).size).toBeLessThan(MB);
    },
    180_000,
  );

  it("50 MB on stderr: the pane shows a bounded part and says the rest is not shown; the host stays under 100 MB", async () => {
    const gate = path.join(sb.cwd, "gate-stderr");
    fs.writeFileSync(gate, ""); // no pause needed: the host idles after the turn
    const id = await spawnBig("stderr", 50 * MB, gate);
    const w = await sb.json(["wait", id, "--timeout", "120s"]);
    expect(w.data.results[0].status).toBe("completed");
    const dir = w.data.results[0].artifactDir as string;
    const hostPid = readEvents(dir).find((e) => e.type === "child_started").pid as number;
    const peak = peakRss(hostPid);
    const pane = (await sb.run(["capture", id, "--lines", "1000"])).stdout;
    expect(pane).toContain("more stderr and non-protocol lines this turn are not shown");
    // 200 lines were shown, not 12,800.
    expect(pane.split("\n").filter((l) => l.startsWith("xxxx")).length).toBeLessThanOrEqual(200);
    expect(peak, `peak RSS ${Math.round(peak / MB)} MB`).toBeLessThan(100 * MB);
  }, 180_000);
});
