// Runner mode session on a real (small) ACP agent, test/fixtures/acp-agent.mjs, through the generic `acp`
// runner: one process across turns, the conversation kept by the agent, interrupts through session/cancel,
// cancel ending the process, and a new process reloading the session after the tmux server is gone.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { groupAlive } from "../../src/util/process-group.js";
import { BIN, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";
import { runOnTty } from "../helpers/tty.js";

const sb = useSandbox("mt-acp");
const AGENT = path.join(REPO, "test", "fixtures", "acp-agent.mjs");
fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
fs.writeFileSync(
  path.join(sb.cwd, ".muster", "agents", "acp-echo.md"),
  `---\ndescription: an ACP agent\nrunner: acp\ncommand: ${JSON.stringify([process.execPath, AGENT])}\n---\nBe brief.\n`,
);

const starts = (dir: string) => readEvents(dir).filter((e) => e.type === "runner_started");
/** The agent processes a child ran, in order (every turn records the one that ran it). */
const processes = (dir: string) => [...new Set(starts(dir).map((e) => e.pid as number))];
const completions = (dir: string) => readEvents(dir).filter((e) => e.type === "completion");

describe("runner acp: a live ACP session per child", () => {
  let kept: { id: string; dir: string; session: string } | undefined;

  it("two turns run on one process; the agent's session carries the conversation; the preamble goes first", async () => {
    const r = await sb.json(["spawn", "--agent", "acp-echo", "--wait", "--timeout", "60", "hello"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const id = r.data.spawned.id as string;
    const dir = r.data.results[0].artifactDir as string;
    expect(r.data.results[0].text).toMatch(/^turn 1 of session (\S+) \(pid (\d+)\): hello$/);
    const [, session, pid] = /session (\S+) \(pid (\d+)\)/.exec(r.data.results[0].text)!;
    const fixtureSession = JSON.parse(
      fs.readFileSync(path.join(sb.cwd, ".acp-fixture", `${session}.json`), "utf8"),
    );
    expect(fixtureSession.turns[0]).toMatch(/^Be brief\.\n\n---\n\nhello$/);
    const two = await sb.json(["send", id, "--wait", "--timeout", "60", "again"]);
    expect(two.data.results[0].text).toBe(`turn 2 of session ${session} (pid ${pid}): again`);
    expect(starts(dir).map((e) => e.pid)).toEqual([Number(pid), Number(pid)]);
    expect(groupAlive(Number(pid))).toBe(true);
    const [c1, c2] = completions(dir);
    expect(c1.runnerSessionId).toBe(session);
    expect(c2.runnerSessionId).toBe(session);
    expect(c2.usage).toEqual({ input: "again".length, output: 5 });
    // Both turns ran (on one process): the tree's budget counts both.
    const b = await sb.json(["budget"]);
    expect(b.data.used.turns).toBe(2);
    kept = { id, dir, session: session! };
  });

  it("a tool call is recorded start and end with its input; an agent error settles errored with its message", async () => {
    const { id, dir } = kept!;
    const t = await sb.json(["send", id, "--wait", "--timeout", "60", "use a tool"]);
    expect(t.data.results[0].status).toBe("completed");
    const tools = readEvents(dir).filter((e) => e.type === "tool_activity");
    expect(tools.map((e) => [e.phase, e.name, e.summary])).toEqual([
      ["start", "execute", "echo fixture"],
      ["end", "execute", ""],
    ]);
    const f = await sb.json(["send", id, "--wait", "--timeout", "60", "fail now"]);
    expect(f.data.results[0]).toMatchObject({ status: "errored", reason: "fixture upstream failure" });
    expect(processes(dir)).toHaveLength(1);
  });

  it("after the tmux server is gone, spawn --resume starts a new process that reloads the session", async () => {
    const { id, dir, session } = kept!;
    const oldPid = processes(dir)[0]!;
    await killServerAndWait(sb.socket);
    await until(() => !groupAlive(oldPid), 10_000);
    const r = await sb.json(["spawn", "--resume", id, "--wait", "--timeout", "60", "still there?"]);
    expect(r.exitCode, r.stderr).toBe(0);
    // Turn 5 of the same session: turns 1-4 came back with session/load (its replay is not this turn's answer).
    expect(r.data.results[0].text).toMatch(
      new RegExp(`^turn 5 of session ${session} \\(pid \\d+\\): still there\\?$`),
    );
    expect(processes(dir)).toHaveLength(2);
    expect(processes(dir)[1]).not.toBe(oldPid);
  });

  it("an agent error keeps its detail: `data.details` (claude-agent-acp) and a JSON string in `data` (codex-acp)", async () => {
    const { id } = kept!;
    const d = await sb.json(["send", id, "--wait", "--timeout", "60", "fail with details"]);
    expect(d.data.results[0]).toMatchObject({
      status: "errored",
      reason: "Internal error: Query closed before response received",
    });
    const j = await sb.json(["send", id, "--wait", "--timeout", "60", "fail with json"]);
    expect(j.data.results[0].reason).toBe("Internal error: No previous sessions found for this project.");
  });

  it("a tool that fails shows ✗ and its error in the pane, and the record keeps the error, not the command", async () => {
    const { id, dir } = kept!;
    const t = await sb.json(["send", id, "--wait", "--timeout", "60", "run a broken tool"]);
    expect(t.data.results[0].status).toBe("completed");
    const ends = readEvents(dir).filter((e) => e.type === "tool_activity" && e.phase === "end");
    expect(ends.at(-1)).toMatchObject({
      name: "execute",
      summary: "error: exit 1: cat: missing.txt: No such file or directory",
    });
    const pane = (await sb.run(["capture", id])).stdout;
    expect(pane).toContain("✗ execute error: exit 1: cat: missing.txt");
    expect(pane).not.toMatch(/✓ execute error/);
  });

  it("send --mode now interrupts a streaming turn through session/cancel; the process stays; cancel ends it", async () => {
    const s = await sb.json(["spawn", "--agent", "acp-echo", "be slow"]);
    const id = s.data.id as string;
    const dir = s.data.artifactDir as string;
    await until(async () => (await sb.run(["capture", id])).stdout.includes("chunk 2"));
    const r = await sb.json(["send", id, "--mode", "now", "--wait", "--timeout", "60", "quick one"]);
    expect(r.data.results[0].text).toMatch(/^turn 2 of session/);
    const [first] = completions(dir);
    expect(first).toMatchObject({ status: "interrupted" });
    expect(first.output.bytes).toBeGreaterThan(0);
    const pid = processes(dir)[0]!;
    expect(processes(dir)).toHaveLength(1);
    expect(groupAlive(pid)).toBe(true);
    await sb.run(["cancel", id]);
    await until(() => !groupAlive(pid), 10_000);
  });

  it("an agent that fails to open its session: the failure names its stderr, which the completion keeps and wait shows", async () => {
    const env = { ...sb.env, ACP_FIXTURE_BROKEN_START: "1" };
    const r = await sb.json(["spawn", "--agent", "acp-echo", "--wait", "--timeout", "60", "hi"], { env });
    expect(r.data.results[0]).toMatchObject({
      status: "errored",
      reason: "Internal error (stderr: fixture: no API key configured)",
      stderr: "fixture: reading ~/.fixture/config.json\nfixture: no API key configured",
    });
    const [c] = completions(r.data.results[0].artifactDir);
    expect(c.stderr).toBe("fixture: reading ~/.fixture/config.json\nfixture: no API key configured");
    const pane = (await sb.run(["capture", r.data.spawned.id])).stdout;
    expect(pane).toContain("fixture: reading ~/.fixture/config.json");
    const human = await sb.run(["spawn", "--agent", "acp-echo", "--wait", "--timeout", "60", "hi"], { env });
    expect(human.stderr).toContain(
      "errored: Internal error (stderr: fixture: no API key configured)\nmuster: the agent's stderr:\n  fixture: reading ~/.fixture/config.json\n  fixture: no API key configured\n",
    );
    await sb.run(["cancel", r.data.spawned.id]);
  });

  it("an agent that never answers initialize is ended by --max-time: exhausted, its process group gone", async () => {
    const env = { ...sb.env, ACP_FIXTURE_SILENT_START: "1" };
    const r = await sb.json(
      ["spawn", "--agent", "acp-echo", "--max-time", "3s", "--wait", "--timeout", "60", "hi"],
      {
        env,
      },
    );
    expect(r.exitCode).toBe(4);
    expect(r.data.results[0]).toMatchObject({
      status: "exhausted",
      reason: expect.stringMatching(/max-time/),
    });
    const [start] = starts(r.data.results[0].artifactDir);
    await until(() => !groupAlive(start!.pid as number), 10_000);
    await sb.run(["cancel", r.data.spawned.id]);
  });

  it("an agent that is not there errors the turn with the reason; mode oneshot says the runner has none", async () => {
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "acp-missing.md"),
      `---\ndescription: gone\nrunner: acp\ncommand: ["/nonexistent/acp-agent"]\n---\n`,
    );
    const r = await sb.json(["spawn", "--agent", "acp-missing", "--wait", "--timeout", "60", "hi"]);
    expect(r.data.results[0]).toMatchObject({ status: "errored" });
    expect(r.data.results[0].reason).toMatch(/command not found: \/nonexistent\/acp-agent/);
    const o = await sb.json(["spawn", "--agent", "acp-echo", "--wait", "--timeout", "60", "hi"], {
      env: { ...sb.env, MUSTER_RUNNER_MODE: "oneshot" },
    });
    expect(o.data.results[0].reason).toMatch(/no one-shot mode/);
  });
});

describe("runner acp: a line too long to read", () => {
  it("is dropped and recorded on the turn as a truncation, which status and logs show", async () => {
    const r = await sb.json([
      "spawn",
      "--agent",
      "acp-echo",
      "--wait",
      "--timeout",
      "60",
      "send a huge line",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const dir = r.data.results[0].artifactDir as string;
    const notes = readEvents(dir).filter(
      (e) => e.type === "progress" && /^truncated: /.test(e.text as string),
    );
    expect(notes).toHaveLength(1);
    expect(notes[0]!.turnId).toBe(r.data.results[0].turnId);
    expect(notes[0]!.text).toMatch(/dropped a \d{8}-byte line from the agent \(over the 16 MiB line limit\)/);
    expect(r.data.results[0].text).toMatch(/turn 1 of session/);
    const logs = await sb.run(["logs", r.data.spawned.id]);
    expect(logs.stdout).toContain("truncated: dropped a");
    await sb.run(["cancel", r.data.spawned.id]);
  });
});

describe("runner acp: permission requests go to the parent", () => {
  const spawnAsking = async (tag: string, prompt = "ask permission to write") => {
    const cwd = path.join(sb.cwd, tag);
    fs.mkdirSync(cwd, { recursive: true });
    const s = await sb.json(["spawn", "--agent", "acp-echo", "--cwd", cwd, prompt]);
    expect(s.exitCode, s.stderr).toBe(0);
    const id = s.data.id as string;
    const req = await until(async () => {
      const inbox = await sb.json(["inbox", "--peek"]);
      return inbox.data.requests?.find((r: { child: string }) => r.child === id);
    });
    return { id, cwd, req, dir: s.data.artifactDir as string };
  };

  it("a flood of requests: the inbox lists the oldest 32 and counts the rest; an error line names only a few", async () => {
    const { id } = await spawnAsking("flood", "flood the parent with requests");
    try {
      const inbox = await until(async () => {
        const r = await sb.json(["inbox", "--peek"]);
        return r.data.requests.length + r.data.moreRequests === 40 ? r.data : undefined;
      });
      expect(inbox.requests).toHaveLength(32);
      expect(inbox.moreRequests).toBe(8);
      expect((await sb.run(["inbox", "--peek"])).stdout).toContain("…and 8 more pending requests");
      // The child has 40: naming it is ambiguous, and the refusal lists five ids and a count, not all 40.
      const ambiguous = await sb.run(["allow", id]);
      expect(ambiguous.exitCode).toBe(2);
      expect(ambiguous.stderr.trim().split("\n")).toHaveLength(1);
      expect(ambiguous.stderr).toMatch(/has 40 pending permissions \((\w{8}, ){4}\w{8} and 35 more \(/);
      expect(ambiguous.stderr.length).toBeLessThan(400);
    } finally {
      // Its 40 requests close with it: they must not crowd the inbox of the tests after this one.
      await sb.run(["cancel", id]);
    }
  });

  it("a pending request shows in inbox and status (waiting-permission); muster allow lets the tool run", async () => {
    const { id, cwd, req, dir } = await spawnAsking("allow");
    // Named as its tool activity would be (the call's kind); the title, the command itself, is its summary.
    expect(req).toMatchObject({
      type: "permission",
      tool: "execute",
      summary: "echo ok > perm.txt",
      choices: ["allow", "allow_always", "deny"],
    });
    expect((await sb.json(["status", id])).data.live.state).toBe("waiting-permission");
    const human = await sb.run(["inbox", "--peek"]);
    expect(human.stdout).toContain(`muster allow ${req.id.slice(-8)}`);
    expect(human.stdout).toContain("permission for execute: echo ok > perm.txt");
    // A question's answer command refuses a permission request, and a wrong answer is refused.
    expect((await sb.run(["answer", req.id, "maybe"])).stderr).toMatch(
      /takes one of: allow, allow_always, deny/,
    );
    const ok = await sb.json(["allow", req.id.slice(-8)]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const r = await sb.json(["wait", id, "--timeout", "60"]);
    expect(r.data.results[0].text).toMatch(/^permission granted \(ok\); turn 1/);
    expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8")).toBe("ok");
    const perms = readEvents(dir).filter((e) => e.type === "permission");
    expect(perms.map((e) => [e.state, e.requestId])).toEqual([
      ["pending", req.id],
      ["granted", req.id],
    ]);
    expect((await sb.json(["inbox", "--peek"])).data.requests ?? []).toEqual([]);
    await sb.run(["cancel", id]);
  });

  it("muster deny returns the denial to the agent; nothing is written", async () => {
    const { id, cwd, req } = await spawnAsking("deny");
    const mustUseAllow = await sb.run(["deny", "ffffffff"]);
    expect(mustUseAllow.exitCode).toBe(2);
    expect((await sb.json(["deny", req.id])).exitCode).toBe(0);
    const r = await sb.json(["wait", id, "--timeout", "60"]);
    expect(r.data.results[0].text).toMatch(/^permission denied; turn 1/);
    expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
    await sb.run(["cancel", id]);
  });

  it("an agent that ends its turn cancelled after a denial (codex-acp) has answered: completed, with a note", async () => {
    const { id } = await spawnAsking("deny-stops", "ask permission to write, stop if denied");
    const req = ((await sb.json(["inbox", "--peek"])).data.requests ?? []).find(
      (r: { child: string }) => r.child === id,
    );
    expect((await sb.json(["deny", req.id])).exitCode).toBe(0);
    const r = await sb.json(["wait", id, "--timeout", "60"]);
    expect(r.data.results[0]).toMatchObject({
      status: "completed",
      text: "I was not allowed to write perm.txt, so I stopped.",
      reason: "the agent ended its turn after the parent denied execute echo ok > perm.txt",
    });
    const human = await sb.run(["result", id]);
    expect(human.stdout).toContain("I was not allowed to write perm.txt");
    await sb.run(["cancel", id]);
  });

  it("send --mode now answers a pending request `cancelled` with session/cancel; it is recorded cancelled", async () => {
    const { id, dir, req } = await spawnAsking("steer");
    const r = await sb.json(["send", id, "--mode", "now", "--wait", "--timeout", "60", "quick one"]);
    expect(r.data.results[0].text).toMatch(/^turn 2 of session/);
    const [first] = completions(dir);
    expect(first).toMatchObject({ status: "interrupted" });
    // The agent got the `cancelled` outcome after session/cancel and ended its turn: the process stays.
    expect(fs.readFileSync(path.join(dir, first.output.path), "utf8").trim()).toBe(
      "permission cancelled after session/cancel",
    );
    expect(processes(dir)).toHaveLength(1);
    const perms = readEvents(dir).filter((e) => e.type === "permission");
    expect(perms.map((e) => [e.state, e.requestId])).toEqual([
      ["pending", req.id],
      ["cancelled", req.id],
    ]);
    expect(perms[1].summary).toBe("echo ok > perm.txt; interrupted by a follow-up (send --mode now)");
    await sb.run(["cancel", id]);
  });

  it("muster cancel closes a pending request as cancelled, not as a timeout", async () => {
    const { id, dir, req } = await spawnAsking("cancel");
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    const closed = readEvents(dir).filter((e) => e.type === "permission" && e.state !== "pending");
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ state: "cancelled", requestId: req.id });
    expect(closed[0].summary).toBe("echo ok > perm.txt; cancelled by muster cancel");
  });

  it("wait on a terminal shows the pending request; its timeout names it and the commands that answer it", async () => {
    const { id, req } = await spawnAsking("wait-tty");
    const short = req.id.slice(-8);
    const tty = await runOnTty(sb, ["wait", id, "--timeout", "3"]);
    const text = tty.raw.toString("utf8").replaceAll("\r", "");
    expect(tty.exitCode).toBe(124);
    // The progress line (clipped) leads with the command that answers the request.
    expect(text).toContain(`· waiting for permission (muster allow|deny ${short}): execute echo ok`);
    expect(text).toContain(
      `muster: ${id.slice(-8)} waits for permission ${short} (execute echo ok > perm.txt): muster allow ${short} or muster deny ${short}`,
    );
    const j = await sb.json(["wait", id, "--timeout", "1"]);
    expect(j.data).toMatchObject({ timedOut: true, requests: [{ id: req.id, type: "permission" }] });
    await sb.run(["cancel", id]);
  });

  it("an unanswered request is denied after MUSTER_PERMISSION_TIMEOUT, and the record says so", async () => {
    const cwd = path.join(sb.cwd, "timeout");
    fs.mkdirSync(cwd, { recursive: true });
    const s = await sb.json(
      ["spawn", "--agent", "acp-echo", "--cwd", cwd, "--wait", "--timeout", "60", "permission?"],
      {
        env: { ...sb.env, MUSTER_PERMISSION_TIMEOUT: "1" },
      },
    );
    expect(s.data.results[0].text).toMatch(/^permission denied; turn 1/);
    const denied = readEvents(s.data.results[0].artifactDir)
      .filter((e) => e.type === "permission")
      .at(-1);
    expect(denied).toMatchObject({ state: "denied" });
    expect(denied.summary).toMatch(/no answer in 1 s/);
    await sb.run(["cancel", s.data.spawned.id]);
  });

  it("permissions: ask on a runner with no prompts to route is a warning at spawn; a bad value is a profile warning", async () => {
    const agents = path.join(sb.cwd, ".muster", "agents");
    fs.writeFileSync(path.join(agents, "mock-ask.md"), "---\nrunner: mock\npermissions: ask\n---\n");
    fs.writeFileSync(path.join(agents, "bad-ask.md"), "---\nrunner: mock\npermissions: maybe\n---\n");
    fs.writeFileSync(
      path.join(agents, "acp-ask.md"),
      `---\nrunner: acp\npermissions: ask\ncommand: ${JSON.stringify([process.execPath, AGENT])}\n---\n`,
    );
    const r = await sb.json(["spawn", "--agent", "mock-ask", "--wait", "--timeout", "60", "hi"]);
    expect(r.data.spawned.warnings).toEqual([
      'agent "mock-ask": mock has no permission prompts to route; permissions: ask is ignored',
    ]);
    expect(r.data.results[0].status).toBe("completed");
    const bad = await sb.json(["spawn", "--agent", "bad-ask", "--wait", "--timeout", "60", "hi"]);
    expect(bad.data.spawned.warnings.join("\n")).toMatch(/field "permissions" must be one of "allow", "ask"/);
    // Runner acp routes whatever its agent asks: no warning.
    const ok = await sb.json(["spawn", "--agent", "acp-ask", "--wait", "--timeout", "60", "hi"]);
    expect(ok.data.spawned.warnings ?? []).toEqual([]);
    await sb.run(["cancel", r.data.spawned.id, bad.data.spawned.id, ok.data.spawned.id]);
  });

  it("a grandchild's request reaches the top labelled with its lineage; allow there lets it run", async () => {
    const cwd = path.join(sb.cwd, "deep");
    fs.mkdirSync(cwd, { recursive: true });
    // The child delegates: its turn is `muster spawn --wait` of an ACP agent, its prompt ({prompt}) asking permission.
    const inner = ["spawn", "--wait", "--timeout", "60", "--agent", "acp-echo", "--cwd", cwd, "{prompt}"];
    const d = await sb.run([
      "spawn",
      "--json",
      "--agent",
      "command",
      "ask permission",
      "--",
      process.execPath,
      BIN,
      ...inner,
    ]);
    expect(d.exitCode, d.stderr).toBe(0);
    const parent = JSON.parse(d.stdout).id as string;
    const req = await until(
      async () =>
        ((await sb.json(["inbox", "--peek"])).data.requests ?? []).find(
          (r: { lineage: string[] }) => r.lineage.length === 2 && r.lineage[0] === parent,
        ),
      30_000,
      100,
    ).catch(async (e) => {
      const all = await sb.run(["ls", "--all", "--json"]);
      const inbox = await sb.run(["inbox", "--peek", "--json"]);
      const cap = await sb.run(["capture", parent]);
      throw new Error(`${e}\n${all.stdout}\n${inbox.stdout}\n${cap.stdout}${cap.stderr}`);
    });
    expect(req).toMatchObject({ type: "permission", tool: "execute", agent: "acp-echo" });
    expect(req.lineage).toEqual([parent, req.child]);
    expect((await sb.json(["status", req.child])).data.live.state).toBe("waiting-permission");
    const human = await sb.run(["inbox", "--peek"]);
    expect(human.stdout).toContain(
      `permission ${req.id.slice(-8)}  from ${parent.slice(-8)} › ${req.child.slice(-8)}`,
    );
    expect((await sb.json(["allow", req.id.slice(-8)])).exitCode).toBe(0);
    const w = await sb.json(["wait", parent, "--timeout", "60"]);
    expect(w.data.results[0].status).toBe("completed");
    expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8")).toBe("ok");
    expect((await sb.json(["result", req.child])).data.text).toMatch(/^permission granted \(ok\)/);
    await sb.run(["cancel", parent]);
  });
});
