/**
 * The Zellij backend, run by the real muster CLI against test/fixtures/zellij-standin.mjs on PATH as
 * `zellij` (no real Zellij can be installed here). The stand-in records every call's argv and starts a
 * new pane's command for real, so these tests check the exact argv per operation and that a child's
 * whole life (spawn, wait, capture, focus, cancel) runs through it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { createZellijBackend } from "../../src/mux/zellij/backend.js";
import { pidAlive, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-zj");
const STANDIN = path.join(REPO, "test", "fixtures", "zellij-standin.mjs");
const bin = path.join(path.dirname(sb.home), "zbin");
fs.mkdirSync(bin, { recursive: true });
fs.symlinkSync(STANDIN, path.join(bin, "zellij"));
sb.env.PATH = `${bin}:${sb.env.PATH}`;
const userHome = sb.env.HOME as string;
const callsFile = path.join(userHome, ".zellij-standin", "calls.ndjson");

/** The argv of every zellij call so far; `since` skips the first n. */
const calls = (since = 0): string[][] =>
  fs.existsSync(callsFile)
    ? fs
        .readFileSync(callsFile, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .slice(since)
    : [];
const actions = (since = 0) => calls(since).filter((c) => c[2] === "action");
const hostPidOf = (dir: string): number =>
  readEvents(dir).findLast((e) => e.type === "child_started")?.pid as number;
const standinPane = (session: string, id: number) =>
  path.join(userHome, ".zellij-standin", "sessions", session, "panes", String(id));

describe("zellij backend against a stand-in zellij on PATH", () => {
  it("--backend zellij: spawn opens a pane with the exact documented argv, and the child runs to completion", async () => {
    const spawned = await sb.json(["spawn", "--backend", "zellij", "mock: tools=1\nhello zellij"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    expect(spawned.data.backend).toBe("zellij");
    const id = spawned.data.id as string;
    const st = (await sb.json(["status", id])).data;
    const dir = st.artifactDir as string;
    expect(st.pane).toMatchObject({
      backend: "zellij",
      id: "terminal_1",
      data: { session: "muster", pane: 1 },
    });

    // The session is created detached (outside Zellij); the child gets a tab of its own (Zellij shows no
    // new-pane in a session without a client), its pane found by diffing list-panes around new-tab.
    const made = calls().filter((c) => c[0] !== "--version");
    expect(made[0]).toEqual(["attach", "--create-background", "muster"]);
    const list = ["--session", "muster", "action", "list-panes", "--json"];
    expect(made[1]).toEqual(list);
    const hostScript = path.join(REPO, "dist", "child", "host.bundle.js");
    expect(made[2]).toEqual([
      ...["--session", "muster", "action", "new-tab", "--name", expect.any(String), "--cwd", sb.cwd, "--"],
      ...["env", "-u", "NODE_EXTRA_CA_CERTS", process.execPath, hostScript, dir],
    ]);
    expect(made[2]![5]).toBe(`mock-${id.slice(-8)}`);
    expect(made[3]).toEqual(list);

    const waited = await sb.json(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode).toBe(0);
    expect(waited.data.results[0]).toMatchObject({ status: "completed" });

    // capture: dump-screen --full of the pane, played back (the stand-in's screen is the host's output).
    const before = calls().length;
    const cap = await sb.run(["capture", id, "--lines", "50"]);
    expect(cap.exitCode, cap.stderr).toBe(0);
    expect(cap.stdout).toContain("completed");
    expect(actions(before)).toContainEqual([
      "--session",
      "muster",
      "action",
      "dump-screen",
      "--full",
      "--pane-id",
      "1",
    ]);

    // attach: outside Zellij the terminal attaches to the child's session.
    const attach = await sb.run(["attach", "--print", id]);
    expect(attach.stdout.trim()).toBe("zellij attach muster");
    const focus = await sb.run(["focus", id]);
    expect(focus.exitCode).not.toBe(0);
    // Not inside Zellij: nothing to focus, so it would attach this terminal, which needs one.
    expect(focus.stderr).toMatch(/attaching needs a terminal; run: zellij attach muster/);
    expect(actions(before).some((c) => c[3] === "focus-pane-id")).toBe(false);

    // Follow-ups go through the inbox as on every backend: the same host takes them.
    const host = hostPidOf(dir);
    const sent = await sb.json(["send", id, "second task", "--wait"]);
    expect(sent.exitCode).toBe(0);
    expect(hostPidOf(dir)).toBe(host);

    // cancel: SIGTERM to the host (a local process), then close-pane by id.
    const n = calls().length;
    const cancelled = await sb.json(["cancel", id]);
    expect(cancelled.exitCode).toBe(0);
    expect(cancelled.data.cancelled[0]).toMatchObject({ id, by: "child", pane: "closed" });
    expect(actions(n)).toContainEqual(["--session", "muster", "action", "close-pane", "--pane-id", "1"]);
    await until(() => !pidAlive(host), 5000);
    expect(readEvents(dir).at(-1)).toMatchObject({ type: "child_exited", reason: "closed" });
    // Every call muster made was one the stand-in (Zellij's documented CLI) accepted.
    expect(calls().every((c) => c[0] === "--version" || c[0] === "attach" || c[2] === "action")).toBe(true);
  });

  it("inside a Zellij session (ZELLIJ set) it is chosen by default, in the caller's session, and focus selects the pane", async () => {
    await execa(path.join(bin, "zellij"), ["attach", "--create-background", "work"], {
      env: { ...sb.env },
      extendEnv: false,
    });
    const inside = { ZELLIJ: "0", ZELLIJ_SESSION_NAME: "work" };
    const n = calls().length;
    const spawned = await sb.json(["spawn", "mock: hang"], { env: inside });
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    expect(spawned.data.backend).toBe("zellij");
    const id = spawned.data.id as string;
    const st = (await sb.json(["status", id], { env: inside })).data;
    expect(st.pane.data).toEqual({ session: "work", pane: 1 });
    // No session is created: the caller's own is used.
    expect(calls(n).some((c) => c[0] === "attach")).toBe(false);
    // A tab of its own; the caller's focus, which new-tab takes, goes back to the tab it was on.
    expect(actions(n).map((c) => c.slice(1, 5))).toEqual([
      ["work", "action", "list-panes", "--json"],
      ["work", "action", "current-tab-info", "--json"],
      ["work", "action", "new-tab", "--name"],
      ["work", "action", "go-to-tab", "1"],
      ["work", "action", "list-panes", "--json"],
    ]);

    await until(() => readEvents(st.artifactDir).some((e) => e.type === "runner_started"));
    const m = calls().length;
    const focus = await sb.run(["focus", id], { env: inside });
    expect(focus.exitCode, focus.stderr).toBe(0);
    expect(actions(m)).toEqual([["--session", "work", "action", "focus-pane-id", "1"]]);

    // A pane closed under the child: its host gets SIGHUP and the child is settled, not left running.
    const host = hostPidOf(st.artifactDir);
    const pgid = Number(fs.readFileSync(path.join(standinPane("work", 1), "pid"), "utf8"));
    process.kill(-pgid, "SIGHUP");
    const lost = await sb.json(["wait", id, "--timeout", "15s"], { env: inside });
    expect(lost.data.results[0].status).toMatch(/lost|cancelled/);
    await until(() => !pidAlive(host), 5000);
    const ls = (await sb.json(["ls"], { env: inside })).data.children.find(
      (c: { id: string }) => c.id === id,
    );
    expect(ls.status).not.toBe("running");
  });

  it("popup: a floating pane of the caller's session closed on exit; resolves once the command has ended", async () => {
    const m = createMuster({ env: { ...sb.env, ZELLIJ: "0", ZELLIJ_SESSION_NAME: "work" }, cwd: sb.cwd });
    const n = calls().length;
    const marker = path.join(sb.cwd, "popup-ran");
    await m.popup(
      {
        argv: [process.execPath, "-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`],
        cwd: sb.cwd,
      },
      {
        title: "sup",
      },
    );
    expect(fs.existsSync(marker)).toBe(true);
    const opened = actions(n).find((c) => c[3] === "new-pane");
    expect(opened?.slice(0, 16)).toEqual([
      ...["--session", "work", "action", "new-pane", "--floating", "--width", "90%", "--height", "80%"],
      ...["--close-on-exit", "--name", "sup", "--cwd", sb.cwd, "--", process.execPath],
    ]);
    // Outside Zellij there is no client to float a pane over.
    const outside = createMuster({ env: { ...sb.env, MUSTER_BACKEND: "zellij" }, cwd: sb.cwd });
    await expect(outside.popup({ argv: ["true"] })).rejects.toThrow(/popup needs a zellij client/);
  });

  it("each backend operation sends its exact argv: split spawn with env, send, exit status, kill", async () => {
    await execa(path.join(bin, "zellij"), ["attach", "--create-background", "work"], {
      env: { ...sb.env },
      extendEnv: false,
    });
    const env = { ...sb.env, ZELLIJ: "0", ZELLIJ_SESSION_NAME: "work" };
    const b = createZellijBackend(env, path.join(sb.home, "backends", "zellij"));
    const n = calls().length;
    // Exits 3 once the gate file exists: alive for as long as the test needs, with no timing to race.
    const gate = path.join(sb.cwd, "op-gate");
    const code = `setInterval(() => require("fs").existsSync(${JSON.stringify(gate)}) && process.exit(3), 20)`;
    const ref = await b.spawn({
      argv: [process.execPath, "-e", code],
      cwd: sb.cwd,
      env: { A_B: "x y" },
      name: "op-test",
      placement: "split",
    });
    const pane = ref.data.pane;
    const s = ["--session", "work", "action"];
    expect(actions(n).find((c) => c[3] === "new-pane")).toEqual([
      ...s,
      ...["new-pane", "--direction", "right", "--name", "op-test", "--cwd", sb.cwd, "--"],
      ...["env", "--", "A_B=x y", process.execPath, "-e", code],
    ]);
    expect(await b.alive(ref)).toBe("alive");
    const m = calls().length;
    await b.send(ref, "-n typed", { enter: true });
    expect(actions(m).filter((c) => c[3] !== "list-panes")).toEqual([
      [...s, "write-chars", "--pane-id", String(pane), "--", "-n typed"],
      [...s, "write", "--pane-id", String(pane), "13"],
    ]);
    expect(fs.readFileSync(path.join(standinPane("work", pane), "typed"), "utf8")).toBe("-n typed\r");
    fs.writeFileSync(gate, "");
    await until(async () => (await b.alive(ref)) === "dead", 5000);
    expect(await b.deadStatus(ref)).toEqual({ exitCode: 3, signal: null });
    await expect(b.send(ref, "late")).rejects.toThrow(/has exited; not sent/);
    const k = calls().length;
    await b.kill(ref);
    expect(actions(k)).toContainEqual([...s, "close-pane", "--pane-id", String(pane)]);
    expect(await b.deadStatus(ref)).toBeNull();
    // A pane of a session that is gone is dead, not unknown; a zellij that fails otherwise is unknown.
    expect(await b.alive({ ...ref, data: { session: "gone", pane } })).toBe("dead");
    const failing = createZellijBackend({ ...env, MUSTER_ZELLIJ_BIN: "/bin/false" }, sb.home);
    expect(await failing.alive(ref)).toBe("unknown");
  });

  it("a spawn whose zellij fails creates nothing and says what zellij said", async () => {
    const before = (await sb.json(["ls"])).data.children.length;
    const bad = await sb.run(["spawn", "--backend", "zellij", "hello"], {
      env: { MUSTER_ZELLIJ_BIN: path.join(bin, "missing-zellij") },
    });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toMatch(
      /cannot run zellij: .*missing-zellij not found \(install zellij or set MUSTER_ZELLIJ_BIN\)/,
    );
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });
});
