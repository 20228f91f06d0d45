import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-ask");

// biome-ignore lint/suspicious/noExplicitAny: loosely read CLI output
type Json = any;

/** argv of a command child whose turn is this shell script (muster is on its PATH). */
const shellChild = (script: string, extra: string[] = []): string[] => [
  "spawn",
  "--json",
  "--agent",
  "command",
  ...extra,
  "task",
  "--",
  "sh",
  "-c",
  script,
  "sh",
];

async function start(script: string, extra: string[] = []): Promise<{ id: string; dir: string }> {
  const r = await sb.run(shellChild(script, extra));
  expect(r.exitCode, r.stderr).toBe(0);
  const d = JSON.parse(r.stdout);
  return { id: d.id, dir: d.artifactDir };
}

const pending = async (): Promise<Json[]> => (await sb.json(["inbox", "--peek"])).data.requests;

async function questionOf(child: string): Promise<Json> {
  return until(async () => (await pending()).find((r) => r.child === child), 20_000, 100);
}

describe("a child asks, the parent answers, nobody exits", () => {
  it("muster ask blocks until muster answer; a choice outside --choices is refused; events record both", async () => {
    const c = await start('a=$(muster ask "Which branch?" --choices main,dev) && echo "got $a"');
    const q = await questionOf(c.id);
    expect(q).toMatchObject({
      type: "question",
      child: c.id,
      lineage: [c.id],
      text: "Which branch?",
      choices: ["main", "dev"],
    });
    // The child is still in its turn, waiting: the question is what it is doing.
    expect((await sb.json(["status", c.id])).data.status).toBe("running");
    const wrong = await sb.run(["answer", q.id.slice(-8), "release"]);
    expect(wrong.exitCode).toBe(2);
    expect(wrong.stderr).toContain("main, dev");
    const ok = await sb.run(["answer", q.id.slice(-8), "dev"]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const w = await sb.json(["wait", c.id, "--timeout", "30s"]);
    expect(w.data.results[0]).toMatchObject({ status: "completed" });
    expect((await sb.run(["result", c.id])).stdout.trim()).toBe("got dev");
    const ev = readEvents(c.dir).filter((e) => e.type === "question" || e.type === "answered");
    expect(ev.map((e) => e.type)).toEqual(["question", "answered"]);
    expect(ev[1]).toMatchObject({ requestId: q.id, outcome: "answered", text: "dev" });
    expect(await pending()).toEqual([]);
    // Answered once: a second answer is refused.
    expect((await sb.run(["answer", q.id, "main"])).exitCode).not.toBe(0);
  });

  it("with --timeout and no answer: 'no answer', a non-zero exit, and the question is no longer pending", async () => {
    const c = await start('muster ask "anyone there?" --timeout 1s; echo "exit $?"');
    const w = await sb.json(["wait", c.id, "--timeout", "30s"]);
    expect(w.data.results[0].status).toBe("completed");
    const out = (await sb.run(["result", c.id])).stdout;
    expect(out).toContain("no answer");
    expect(out).toContain("exit 124");
    expect(readEvents(c.dir).find((e) => e.type === "answered")).toMatchObject({ outcome: "timeout" });
    expect((await pending()).some((r) => r.child === c.id)).toBe(false);
  });

  it("a grandchild's question reaches the top labelled with its lineage, and its answer goes back down", async () => {
    const inner = 'x=$(muster ask "deep question?") && echo "deep answer: $x"';
    const r = await sb.run([
      "spawn",
      "--json",
      "--agent",
      "command",
      "delegate",
      "--",
      process.execPath,
      BIN,
      "spawn",
      "--wait",
      "--agent",
      "command",
      "inner",
      "--",
      "sh",
      "-c",
      inner,
      "sh",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const parent = JSON.parse(r.stdout).id as string;
    const q = await until(
      async () => (await pending()).find((x) => x.lineage.length === 2 && x.lineage[0] === parent),
      30_000,
      100,
    );
    expect(q.text).toBe("deep question?");
    const human = await sb.run(["inbox", "--peek"]);
    expect(human.stdout).toContain(`from ${parent.slice(-8)} › ${q.child.slice(-8)}`);
    expect((await sb.run(["answer", q.id, "forty-two"])).exitCode).toBe(0);
    const w = await sb.json(["wait", parent, "--timeout", "60s"]);
    expect(w.data.results[0].status).toBe("completed");
    expect((await sb.run(["result", q.child])).stdout).toContain("deep answer: forty-two");
  });

  it("inbox --watch prints a question as it is asked, and --idle-timeout does not end a turn waiting for an answer", async () => {
    const watch = execa(process.execPath, [BIN, "inbox", "--peek", "--watch", "--json"], {
      cwd: sb.cwd,
      env: sb.env,
      extendEnv: false,
      reject: false,
    });
    try {
      // The first document is the manifest; each question is one line after it.
      let out = "";
      watch.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
      });
      await until(() => out.includes("waitingGroups"), 20_000);
      const c = await start('a=$(muster ask "keep going?") && echo "told: $a"', ["--idle-timeout", "1s"]);
      const line = await until(
        () => out.split("\n").find((l) => l.startsWith("{") && l.includes('"keep going?"')),
        20_000,
      );
      const q = JSON.parse(line!);
      expect(q).toMatchObject({ type: "question", child: c.id, text: "keep going?" });
      // Longer than the idle timeout, with no output from the agent: it waits on its parent, not idle.
      await new Promise((res) => setTimeout(res, 2500));
      expect((await sb.run(["answer", q.id, "yes"])).exitCode).toBe(0);
      const w = await sb.json(["wait", c.id, "--timeout", "30s"]);
      expect(w.data.results[0]).toMatchObject({ status: "completed" });
      expect((await sb.run(["result", c.id])).stdout.trim()).toBe("told: yes");
    } finally {
      watch.kill("SIGTERM");
      await watch;
    }
  });

  it("muster ask outside a child, and with bad flags, is a one-line error", async () => {
    const outside = await sb.run(["ask", "hello?"]);
    expect(outside.exitCode).toBe(2);
    expect(outside.stderr).toContain("only inside a child");
    const env = { MUSTER_ARTIFACT_DIR: sb.cwd };
    const bad = await sb.run(["ask", "hello?", "--timeout", "soon"], { env });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr.trim().split("\n")).toHaveLength(1);
    expect((await sb.run(["answer", "zzzz", "x"])).exitCode).toBe(2);
  });

  it("a child with exactly one pending question is answered by its name or id; with two, it asks for the question's id", async () => {
    const named = await start('a=$(muster ask "Which colour?") && echo "got $a"', ["--name", "painter"]);
    const two = await start('muster ask "First?" >/dev/null & muster ask "Second?" >/dev/null & wait');
    await questionOf(named.id);
    await until(async () => (await pending()).filter((r) => r.child === two.id).length === 2, 20_000, 100);
    const byName = await sb.run(["answer", "painter", "teal"]);
    expect(byName.exitCode, byName.stderr).toBe(0);
    expect(byName.stdout).toMatch(/^answered [0-9a-f]{8} \(painter /);
    expect((await sb.json(["wait", named.id, "--timeout", "30s"])).data.results[0].status).toBe("completed");
    expect((await sb.run(["result", named.id])).stdout.trim()).toBe("got teal");
    // Settled: nothing pending any more.
    const none = await sb.run(["answer", "painter", "again"]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/child painter has no pending request/);
    const ambiguous = await sb.run(["answer", two.id.slice(-8), "x"]);
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toMatch(
      /has 2 pending requests \([0-9a-f]{8}, [0-9a-f]{8}\): name one by its id/,
    );
    for (const q of (await pending()).filter((r) => r.child === two.id))
      expect((await sb.run(["answer", q.id, "ok"])).exitCode).toBe(0);
    expect((await sb.json(["wait", two.id, "--timeout", "30s"])).data.results[0].status).toBe("completed");
  });
});
