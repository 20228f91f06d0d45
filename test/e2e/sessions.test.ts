import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { listSessions, loadSession, manifestOf } from "../../src/sessions/store.js";
import { delegating, pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";

const sb = useSandbox("mt-sess");
const field = (text: string, name: string) => new RegExp(`^${name}: (.*)$`, "m").exec(text)?.[1];
const sessionDir = (artifactDir: string) => path.join(artifactDir, "..", "..", "subagents");

describe("every child is a resumable JSONL conversation owned by one primary", () => {
  it("turns persist as JSONL named by the child id; manifest and conversation round-trip", async () => {
    const first = (await sb.json(["spawn", "--wait", "--model", "mock:deep", "first question"])).data;
    const id = first.spawned.id as string;
    await sb.json(["send", id, "--wait", "second question"]);
    const dir = first.results[0].artifactDir as string;
    const file = path.join(sessionDir(dir), `${id}.jsonl`);
    const s = loadSession(file);
    expect(s.header).toMatchObject({
      type: "session",
      id,
      primary: first.spawned.primary ?? expect.any(String),
      parent: null,
    });
    expect(s.skipped).toBe(0);
    expect(s.messages.map((m) => `${m.role}${m.role === "system" ? `:${m.kind}` : ""}`)).toEqual([
      "system:primary-context",
      "system:child-role",
      "system:profile",
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(manifestOf(s)).toEqual({
      primary: s.header!.primary,
      parent: null,
      agent: "mock",
      runner: "mock",
    });
    const users = s.messages.filter((m) => m.role === "user");
    expect(users.map((m) => m.text)).toEqual(["first question", "second question"]);
    expect(users.map((m) => (m.metadata as { model?: string }).model)).toEqual(["mock:deep", "mock:deep"]);
    const answers = s.messages.filter((m) => m.role === "assistant");
    expect(answers[1]!.text).toBe((await sb.run(["result", id])).stdout);
    expect(answers.every((m) => (m.metadata as { usage?: unknown }).usage)).toBe(true);
    expect(listSessions(sessionDir(dir))).toContain(id);
  });

  it("restart + resume continues the child in a new pane through the runner's own session", async () => {
    const a = (await sb.json(["spawn", "--wait", "remember the word tangerine"])).data;
    const id = a.spawned.id as string;
    const runnerSession = field(a.results[0].text, "session");
    await sb.run(["cancel", id]);
    // Everything goes away: the tmux server (every pane) and any parent process.
    await killServerAndWait(sb.socket);
    const r = await sb.json(["spawn", "--resume", id.slice(-8), "--wait", "what was the word?"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const text = r.data.results[0].text as string;
    expect(field(text, "session")).toBe(runnerSession);
    expect(field(text, "history-turns")).toBe("1");
    expect(field(text, "previous-task")).toBe("remember the word tangerine");
    expect(r.data.resumed.newPane).toMatch(/^%\d+$/);
    const evs = readEvents(a.results[0].artifactDir);
    expect(evs.filter((e) => e.type === "child_started").map((e) => e.by)).toEqual(["spawn", "resume"]);
    expect(evs.at(-1)).toMatchObject({
      type: "completion",
      status: "completed",
      runnerSessionId: runnerSession,
    });
  });

  it("another primary cannot resolve or resume the child", async () => {
    const id = (await sb.json(["spawn", "--wait", "mine"])).data.spawned.id as string;
    const other = { MUSTER_PRIMARY: "01a22900-0000-7000-8000-00000000beef" };
    const st = await sb.run(["status", id], { env: other });
    expect(st.exitCode).toBe(2);
    expect(st.stderr).toContain(`belongs to another primary`);
    expect(st.stderr).toMatch(/reach it with --primary [0-9a-f]{8}/);
    const rs = await sb.run(["spawn", "--resume", id, "hijack"], { env: other });
    expect(rs.exitCode).toBe(2);
    expect(rs.stderr).toContain("belongs to another primary");
    const ls = await sb.json(["ls"], { env: other });
    expect(ls.data.children ?? []).toEqual([]);
    const all = await sb.json(["ls", "--all"]);
    expect(
      all.data.primaries.some((p: { children: { id: string }[] }) => p.children.some((c) => c.id === id)),
    ).toBe(true);
  });

  it("a child whose first turn failed is not resumable; one with a completed turn is", async () => {
    const bad = (await sb.json(["spawn", "--wait", "mock: exit=4"])).data;
    expect(bad.results[0]).toMatchObject({ status: "errored", resumable: false });
    expect((await sb.json(["status", bad.spawned.id])).data.resumable).toBe(false);
    const r = await sb.run(["spawn", "--resume", bad.spawned.id, "try again"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("not resumable");
    const good = (await sb.json(["spawn", "--wait", "fine"])).data;
    expect(good.results[0].resumable).toBe(true);
  });

  it("one active turn per child: a resume during a turn is rejected, not interleaved", async () => {
    const ok = (await sb.json(["spawn", "--wait", "done once"])).data.spawned.id as string;
    await sb.json(["send", ok, "mock: hang"]);
    const r = await sb.run(["spawn", "--resume", ok, "me too"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("already has an active turn");
    await sb.run(["cancel", ok]);
  });

  it("model and reasoning: explicit values change this turn and later ones, omitted ones keep the last", async () => {
    const a = (await sb.json(["spawn", "--wait", "one"])).data;
    const id = a.spawned.id as string;
    expect([field(a.results[0].text, "model"), field(a.results[0].text, "reasoning")]).toEqual([
      "mock:default",
      "none",
    ]);
    const b = (await sb.json(["send", id, "--wait", "--reasoning", "high", "two"])).data;
    expect([field(b.results[0].text, "model"), field(b.results[0].text, "reasoning")]).toEqual([
      "mock:default",
      "high",
    ]);
    const c = (await sb.json(["send", id, "--wait", "--model", "mock:deep", "three"])).data;
    expect([field(c.results[0].text, "model"), field(c.results[0].text, "reasoning")]).toEqual([
      "mock:deep",
      "high",
    ]);
    const d = (await sb.json(["send", id, "--wait", "four"])).data;
    expect([field(d.results[0].text, "model"), field(d.results[0].text, "reasoning")]).toEqual([
      "mock:deep",
      "high",
    ]);
    const bad = await sb.run(["send", id, "--reasoning", "ludicrous", "five"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/reasoning.*(low|medium|high)/);
  });

  it("new versus resume: exactly one of --agent and --resume, and a non-empty prompt", async () => {
    const id = (await sb.json(["spawn", "--wait", "base"])).data.spawned.id as string;
    expect((await sb.run(["spawn", "--agent", "mock", "--resume", id, "x"])).exitCode).toBe(2);
    expect((await sb.run(["spawn", "--resume", id, "  "])).exitCode).toBe(2);
    expect((await sb.run(["spawn", "--resume", id, "x", "--", "echo"])).exitCode).toBe(2);
  });

  it("a runner without native resume gets the conversation as a transcript", async () => {
    const agents = path.join(sb.cwd, ".muster", "agents");
    fs.mkdirSync(agents, { recursive: true });
    const agent = path.join(REPO, "test", "fixtures", "echo-agent.mjs");
    fs.writeFileSync(
      path.join(agents, "echo.md"),
      `---\ndescription: echoes its prompt\nrunner: command\nprotocol: muster-jsonl\ncommand: ${JSON.stringify([process.execPath, agent, "{prompt_file}"])}\n---\nEcho.\n`,
    );
    const a = (await sb.json(["spawn", "--agent", "echo", "--wait", "alpha"])).data;
    expect(a.results[0].text).toBe("got:\nalpha");
    const b = (await sb.json(["send", a.spawned.id, "--wait", "beta"])).data;
    expect(b.results[0].text).toBe(
      "got:\nThe conversation so far:\n\nUser:\nalpha\n\nAssistant:\ngot:\nalpha\n\nThe new request:\n\nbeta",
    );
    // The record keeps the exact prompt; only the runner's copy carries the transcript.
    const turn = b.results[0].turnId as string;
    expect(fs.readFileSync(path.join(b.results[0].artifactDir, "prompts", `${turn}.txt`), "utf8")).toBe(
      "beta",
    );
  });

  it("a child can start a grandchild: same primary, parent and depth recorded", async () => {
    const r = await sb.run(delegating(["spawn", "--wait", "grandchild work"]));
    expect(r.exitCode, r.stderr).toBe(0);
    const child = JSON.parse(r.stdout).spawned.id as string;
    const ls = (await sb.json(["ls"])).data.children as { id: string; parent: string | null }[];
    const grand = ls.find((c) => c.parent === child);
    expect(grand).toBeDefined();
    const meta = JSON.parse(
      fs.readFileSync(
        path.join((await sb.json(["status", grand!.id])).data.artifactDir, "meta.json"),
        "utf8",
      ),
    );
    expect(meta).toMatchObject({ parent: child, depth: 1 });
  });

  it("a parent SIGKILLed while children run loses nothing: a new parent sees every completion", async () => {
    const parent = execa(
      process.execPath,
      [path.join(REPO, "test", "fixtures", "parent-then-killed.mjs"), "3"],
      { cwd: sb.cwd, env: sb.env, reject: false },
    );
    let out = "";
    parent.stdout!.on("data", (d) => {
      out += d;
    });
    const ids = await until(() => (out.includes("\n") ? (JSON.parse(out) as string[]) : undefined), 20_000);
    parent.kill("SIGKILL");
    await parent;
    // While no parent runs, one child's host dies too.
    const victim = (await sb.json(["status", ids[2]!])).data;
    const hostPid = readEvents(victim.artifactDir).find((e) => e.type === "child_started")!.pid as number;
    process.kill(hostPid, "SIGKILL");
    await until(() => !pidAlive(hostPid), 3000);
    const w = await sb.json(["wait", ...ids, "--timeout", "30s"]);
    const byId = Object.fromEntries(
      w.data.results.map((x: { id: string; status: string }) => [x.id, x.status]),
    );
    expect(byId).toEqual({ [ids[0]!]: "completed", [ids[1]!]: "completed", [ids[2]!]: "lost" });
    const ls = (await sb.json(["ls"])).data.children as { id: string; status: string }[];
    expect(
      ls
        .filter((c) => ids.includes(c.id))
        .map((c) => c.status)
        .sort(),
    ).toEqual(["idle", "idle", "lost"]);
  });
});
