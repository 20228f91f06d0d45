// mode tui's submit rules against a stand-in TUI (test/fixtures/fake-tui.mjs, run as `pi`): a lost Enter is
// pressed again while the draft is still in the box, a slow start hook never gets a second Enter, a follow-up
// waits until the TUI is idle, and a wait past its deadline ends the turn saying why. The real TUIs are in
// test/agents/tui-*.test.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const FAKE = path.join(REPO, "test", "fixtures", "fake-tui.mjs");

describe("mode tui: submitting a prompt to a TUI", { timeout: 60_000 }, () => {
  const sb = useSandbox("mt-tuisub");
  const logs = path.join(sb.cwd, "..", "fake-logs");
  beforeAll(() => {
    fs.mkdirSync(logs, { recursive: true });
    // A project profile asks for the mode (the other way in, besides spawn --tui).
    fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
    fs.writeFileSync(
      path.join(sb.cwd, ".muster", "agents", "tuipi.md"),
      "---\ndescription: pi in its TUI\nrunner: pi\nmode: tui\n---\n",
    );
  });
  const envFor = (mode: string) => {
    const log = path.join(logs, `${mode}.ndjson`);
    return { log, env: { MUSTER_PI_BIN: FAKE, FAKE_TUI_MODE: mode, FAKE_TUI_LOG: log } };
  };
  const entries = (log: string) =>
    fs
      .readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const spawnAndWait = async (env: Record<string, string>, prompt: string) => {
    const s = await sb.json(["spawn", "--agent", "tuipi", prompt], { env });
    expect(s.exitCode, s.stderr).toBe(0);
    const w = await sb.json(["wait", s.data.id, "--timeout", "40"], { env, timeout: 50_000 });
    return { s: s.data, r: w.data.results?.[0] };
  };

  it("an Enter the TUI lost is pressed again while the draft is in its box: one submit", async () => {
    const { log, env } = envFor("drop-first-enter");
    const { r } = await spawnAndWait(env, "hello there");
    expect(r?.status, JSON.stringify(r)).toBe("completed");
    expect(r.text).toBe("fake answer to: hello there");
    const e = entries(log);
    expect(e.filter((x) => x.kind === "enter").map((x) => x.draft)).toEqual(["hello there", "hello there"]);
    expect(e.filter((x) => x.kind === "submit")).toHaveLength(1);
  });

  it("a start and its stop read together (one write) still end the turn, twice in a row", async () => {
    const { env } = envFor("one-write");
    const { s, r } = await spawnAndWait(env, "quick one");
    expect(r?.status, JSON.stringify(r)).toBe("completed");
    expect(r.text).toBe("fake answer to: quick one");
    const sent = await sb.json(["send", s.id, "--wait", "--timeout", "20", "quick two"], {
      env,
      timeout: 30_000,
    });
    expect(sent.data.results?.[0]?.status, JSON.stringify(sent.data)).toBe("completed");
    expect(sent.data.results[0].text).toBe("fake answer to: quick two");
  });

  it("a start hook that is slow to arrive gets no second Enter (the box is empty)", async () => {
    const { log, env } = envFor("slow-hook");
    const { r } = await spawnAndWait(env, "wait for me");
    expect(r?.status, JSON.stringify(r)).toBe("completed");
    expect(r.text).toBe("fake answer to: wait for me");
    expect(entries(log).filter((x) => x.kind === "enter")).toHaveLength(1);
  });

  it("a follow-up sent while a person's typed turn runs is pasted only once the TUI is idle", async () => {
    const { log, env } = envFor("slow-answer");
    const { s, r } = await spawnAndWait(env, "first");
    expect(r?.status, JSON.stringify(r)).toBe("completed");
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "-l", "typed"]);
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "Enter"]);
    await until(() => entries(log).some((x) => x.kind === "submit" && x.prompt === "typed"), 10_000);
    const sent = await sb.json(["send", s.id, "--wait", "--timeout", "40", "follow-up"], {
      env,
      timeout: 50_000,
    });
    expect(sent.data.results?.[0]?.status, JSON.stringify(sent.data)).toBe("completed");
    expect(sent.data.results[0].text).toBe("fake answer to: follow-up");
    const e = entries(log);
    const typedStop = e.findIndex((x) => x.kind === "stop" && x.prompt === "typed");
    const followPaste = e.findIndex((x) => x.kind === "paste" && x.text === "follow-up");
    expect(typedStop).toBeGreaterThan(-1);
    expect(followPaste).toBeGreaterThan(typedStop);
    expect(e[followPaste].busy).toBe(false);
    // The typed line is a turn of its own, with its own answer.
    const done = await until(() => {
      const c = readEvents(s.artifactDir).filter((x) => x.type === "completion");
      return c.length === 3 ? c : undefined;
    }, 10_000);
    const typedTurn = readEvents(s.artifactDir).find(
      (x) => x.type === "turn_started" && x.source === "typed",
    );
    const typedDone = done.find((c) => c.turnId === typedTurn?.turnId);
    expect(typedDone?.status).toBe("completed");
    const res = await sb.run(["result", s.id, "--turn", typedDone!.turnId]);
    expect(res.stdout.trim()).toBe("fake answer to: typed");
  });

  it("a TUI that never becomes ready is reported as a progress record with what its screen shows", async () => {
    const { env } = envFor("never-ready");
    const slow = { ...env, MUSTER_TUI_SLOW_START_MS: "800" };
    const s = await sb.json(["spawn", "--agent", "tuipi", "never taken"], { env: slow });
    expect(s.exitCode, s.stderr).toBe(0);
    const said = await until(() => readEvents(s.data.artifactDir).find((e) => e.type === "progress"), 20_000);
    expect(said.text).toMatch(
      /^the agent's TUI is not ready after \d+ s \(its screen: fake tui \/ ─+ \/ ─+\)$/,
    );
    const st = await sb.json(["status", s.data.id], { env: slow });
    expect(st.data.status).toBe("running");
    await sb.json(["cancel", s.data.id], { env: slow });
  });

  it("a prompt a TUI never takes (it never becomes ready) ends its turn errored at the deadline, saying why", async () => {
    const { env } = envFor("never-ready");
    const { r } = await spawnAndWait({ ...env, MUSTER_TUI_READY_TIMEOUT_MS: "2000" }, "never taken");
    expect(r?.status, JSON.stringify(r)).toBe("errored");
    expect(r.reason).toBe("the agent's TUI did not take the prompt within 2 s: it never became ready");
  });

  it("a start hook that never comes ends the turn errored at the deadline, with no second Enter", async () => {
    const { log, env } = envFor("no-start-hook");
    const { r } = await spawnAndWait({ ...env, MUSTER_TUI_SUBMIT_TIMEOUT_MS: "2000" }, "unheard");
    expect(r?.status, JSON.stringify(r)).toBe("errored");
    expect(r.reason).toBe("the agent's TUI reported no start of the prompt within 2 s of its Enter");
    expect(entries(log).filter((x) => x.kind === "enter")).toHaveLength(1);
    expect(entries(log).filter((x) => x.kind === "submit")).toHaveLength(1);
  });

  it("a TUI a person left (/exit) is started again for the next turn, continuing its session", async () => {
    const { log, env } = envFor("plain");
    const { s, r } = await spawnAndWait(env, "before exit");
    expect(r?.status, JSON.stringify(r)).toBe("completed");
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "-l", "/exit"]);
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "Enter"]);
    const pid = readEvents(s.artifactDir).find((x) => x.type === "runner_started")!.pid as number;
    await until(() => !pidAlive(pid), 10_000);
    const sent = await sb.json(["send", s.id, "--wait", "--timeout", "40", "after exit"], {
      env,
      timeout: 50_000,
    });
    expect(sent.data.results?.[0]?.status, JSON.stringify(sent.data)).toBe("completed");
    expect(sent.data.results[0].text).toBe("fake answer to: after exit");
    const starts = entries(log).filter((x) => x.kind === "started");
    expect(starts).toHaveLength(2);
    expect(starts[0].argv).not.toContain("--session");
    expect(starts[1].argv.slice(-2)).toEqual(["--session", "fake-session"]);
    const pids = readEvents(s.artifactDir)
      .filter((x) => x.type === "runner_started")
      .map((x) => x.pid);
    expect(new Set(pids).size).toBe(2);
  });

  it("runs under the pty backend too: the TUI's screen is what capture shows, and turns complete", async () => {
    const { env } = envFor("plain");
    const s = await sb.json(["spawn", "--backend", "pty", "--agent", "tuipi", "on pty"], { env });
    expect(s.exitCode, s.stderr).toBe(0);
    const w = await sb.json(["wait", s.data.id, "--timeout", "40"], { env, timeout: 50_000 });
    expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
    expect(w.data.results[0].text).toBe("fake answer to: on pty");
    const cap = await sb.run(["capture", s.data.id], { env });
    expect(cap.stdout).toContain("fake tui");
    await sb.run(["cancel", s.data.id], { env });
  });
});
