/**
 * Children on SSH hosts (place `ssh:<host>`), against real sshd test hosts in namespaces of their own
 * (test/helpers/ssh-hosts.ts): each host has a private /tmp, /root and /run, so muster's far side, the
 * child's artifact dir and the host's tmux server are on that host's disk only, and the parent reads a
 * mirror that arrives over ssh. Root only.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlDirFor } from "../../src/place/ssh/place.js";
import { processesMentioning, readEvents, sandbox, until, writeProjectAgent } from "../helpers/cli.js";
import { attachAndDetach, viewInWeb, withTop } from "../helpers/far-views.js";
import { makeRepo } from "../helpers/git-repo.js";
import { connectMcp } from "../helpers/mcp.js";
import { pidsInNamespace } from "../helpers/ns-pids.js";
import { placeKeeperOf } from "../helpers/place-keeper.js";
import {
  existsOn,
  farDirOf,
  type SshTestHost,
  sshHostsAvailable,
  startSshHost,
} from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const sb = sandbox("mt-ssh");
let base = "";
let hosts: SshTestHost[] = [];

const farDir = (dir: string) => farDirOf(sb.home, dir);

describe.skipIf(!available.ok && !process.env.CI)("children on SSH hosts (real sshd test hosts)", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-ssh-"));
    hosts = [startSshHost(base, "h1"), startSshHost(base, "h2"), startSshHost(base, "h3")];
    for (const h of hosts) {
      const added = await sb.run([
        "hosts",
        "add",
        h.alias,
        h.alias,
        "--ssh-config",
        h.config,
        "--workdir",
        "/root",
      ]);
      expect(added.exitCode, added.stderr).toBe(0);
    }
  }, 60_000);

  afterAll(async () => {
    // Every place a child ran in (host names other than the test hosts' aliases too).
    const ls = await sb.json(["ls"]).catch(() => undefined);
    const places = new Set<string>(hosts.map((h) => `ssh:${h.alias}`));
    for (const c of (ls?.data.children ?? []) as { place: string }[])
      if (c.place !== "local") places.add(c.place);
    await sb.run(["cancel", "--all"]);
    for (const place of places) {
      const k = placeKeeperOf(sb.home, place);
      await until(async () => (await k.dirs()).length === 0, 15_000).catch(() => undefined);
      await k.stop();
    }
    for (const h of hosts) h.stop();
    expect(await sb.cleanup()).toEqual([]);
    fs.rmSync(base, { recursive: true, force: true });
    // The folder of this state root's master sockets (the masters ended with their hosts).
    fs.rmSync(controlDirFor(sb.home), { recursive: true, force: true });
  }, 60_000);

  it("hosts ls, check and install report what each host has", async () => {
    const ls = await sb.json(["hosts", "ls"]);
    expect(ls.data.hosts.map((h: { name: string }) => h.name)).toEqual(["h1", "h2", "h3"]);
    const doctor = await sb.json(["doctor"]);
    expect(doctor.data.hosts.map((h: { name: string }) => h.name)).toEqual(["h1", "h2", "h3"]);
    expect((await sb.run(["doctor"])).stdout).toMatch(
      /^host h1 +named +h1: muster hosts check h1 reaches it$/m,
    );
    const before = await sb.json(["hosts", "check", "h2"]);
    expect(before.exitCode, before.stderr).toBe(0);
    expect(before.data).toMatchObject({ name: "h2", reachable: true, node: { ok: true }, problems: [] });
    expect(before.data.muster.current).toBe(false);
    const installed = await sb.json(["hosts", "install", "h2"]);
    expect(installed.exitCode, installed.stderr).toBe(0);
    expect(installed.data.already).toBe(false);
    expect(existsOn(hosts[1]!, path.posix.join(installed.data.dir, "dist/child/host.bundle.js"))).toBe(true);
    // Installed on h2 only: h1's /root and this machine's have none of it.
    expect(existsOn(hosts[0]!, installed.data.dir)).toBe(false);
    expect(fs.existsSync(installed.data.dir)).toBe(false);
    const after = await sb.json(["hosts", "check", "h2"]);
    expect(after.data.muster.current).toBe(true);
    expect((await sb.json(["hosts", "install", "h2"])).data.already).toBe(true);
    // Another build there (an older muster installed it): the next spawn installs this one again by itself.
    hosts[1]!.inside(["sh", "-c", "echo 0.0.1-other > /root/.local/state/muster/install/current"]);
    expect((await sb.json(["hosts", "check", "h2"])).data.muster).toMatchObject({
      installed: "0.0.1-other",
      current: false,
    });
    const again = await sb.json(["spawn", "--on", "h2", "--wait", "after another build"]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect((await sb.json(["hosts", "check", "h2"])).data.muster.current).toBe(true);
  });

  it("spawn --on runs the child there: wait, send, resume; its files are on that host only", async () => {
    const spawned = await sb.json(["spawn", "--on", "h1", "mock: tools=1\nfirst task on h1"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, artifactDir: dir } = spawned.data;
    const waited = await sb.json(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.data.results[0]).toMatchObject({ status: "completed" });
    const st = (await sb.json(["status", id])).data;
    expect(st).toMatchObject({ status: "idle", place: "ssh:h1", cwd: "/root" });
    // The far log is the one the host wrote; the mirror here is a copy of it, byte for byte.
    const far = farDir(dir);
    expect(hosts[0]!.inside(["cat", path.posix.join(far, "events.ndjson")])).toBe(
      fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
    );
    expect(existsOn(hosts[1]!, far)).toBe(false);
    expect(fs.existsSync(far)).toBe(false);
    // A follow-up goes out through the mirror and its answer comes back.
    const sent = await sb.json(["send", id, "--wait", "second task"]);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(sent.data.results[0]).toMatchObject({ status: "completed" });
    // Cancel closes it there; resume starts a new host there on the same conversation.
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    await until(() => readEvents(dir).some((e) => e.type === "child_exited"), 15_000);
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "third task"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.data.results[0]).toMatchObject({ status: "completed" });
    expect(readEvents(dir).filter((e) => e.type === "child_started")).toHaveLength(2);
  });

  it("attach reaches the child's pane there through a real terminal; capture reads it", async () => {
    const spawned = await sb.json(["spawn", "--on", "h2", "--wait", "a task to look at"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.spawned.id as string;
    const captured = await sb.run(["capture", id]);
    expect(captured.exitCode, captured.stderr).toBe(0);
    expect(captured.stdout).toContain(`muster child ${id}`);
    const printed = (await sb.json(["attach", "--print", id])).data.command as string[];
    expect(printed.slice(0, 2)).toEqual(["ssh", "-t"]);
    expect(await attachAndDetach(sb, id, "a task to look at")).toBe(0);
    expect((await sb.json(["status", id])).data.status).toBe("idle");
    // The web page's terminal: the viewer runs on the host through ssh -t, and a typed line is a turn there.
    await viewInWeb(sb, id, "a task to look at", "typed from the page");
    expect((await sb.json(["result", id])).data.text).toContain("Task: typed from the page");

    // From inside tmux: the pane there opens in a new window of the caller's session (not a nested client).
    execFileSync("tmux", ["-L", sb.socket, "new-session", "-d", "-s", "outer", "-x", "100", "-y", "30"]);
    const fmt = (f: string) =>
      execFileSync("tmux", ["-L", sb.socket, "display-message", "-p", "-t", "outer:", f]).toString().trim();
    const inside = {
      TMUX: `${fmt("#{socket_path}")},${fmt("#{pid}")},${fmt("#{session_id}").slice(1)}`,
      TMUX_PANE: fmt("#{pane_id}"),
    };
    const opened = await sb.run(["attach", id], { env: inside });
    expect(opened.exitCode, opened.stderr).toBe(0);
    expect(opened.stdout).toContain(`opened ${id.slice(-8)} in a new window`);
    const windows = () =>
      execFileSync("tmux", [
        "-L",
        sb.socket,
        "list-windows",
        "-t",
        "outer",
        "-F",
        "#{window_name} #{pane_start_command}",
      ]).toString();
    expect(windows()).toMatch(new RegExp(`attach-${id.slice(-8)} .*ssh.* -t `));
    // It shows the child's pane there.
    await until(() => {
      const shown = execFileSync("tmux", [
        "-L",
        sb.socket,
        "capture-pane",
        "-p",
        "-t",
        `outer:attach-${id.slice(-8)}`,
      ]).toString();
      return shown.includes("a task to look at");
    }, 20_000);
    execFileSync("tmux", ["-L", sb.socket, "kill-session", "-t", "outer"]);
  });

  it("a link killed mid-turn loses nothing: the mirror catches up from its cursor, the completion comes once", async () => {
    const spawned = await sb.json(["spawn", "--on", "h1", "mock: sleep=3 tools=6\nlong work"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, artifactDir: dir } = spawned.data;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
    // The keeper's link here: the ssh client running the relay hub on h1.
    const links = () =>
      processesMentioning("relay-hub-main").filter(
        (p) => p.cmdline.startsWith("ssh ") && p.cmdline.includes(" h1 "),
      );
    const first = links();
    expect(first.length).toBeGreaterThan(0);
    for (const p of first) process.kill(p.pid, "SIGKILL");
    const waited = await sb.json(["wait", id, "--timeout", "40s"]);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.data.results[0]).toMatchObject({ status: "completed" });
    const turnId = waited.data.results[0].turnId;
    expect(readEvents(dir).filter((e) => e.type === "completion" && e.turnId === turnId)).toHaveLength(1);
    // A new link carried the rest.
    expect(links().some((p) => !first.some((f) => f.pid === p.pid))).toBe(true);
    expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8")).toBe(
      hosts[0]!.inside(["cat", path.posix.join(farDir(dir), "events.ndjson")]),
    );
  });

  it("--on any spreads 12 children over three hosts; the run-slot bound of 4 holds across them", async () => {
    const env = { MUSTER_MAX_RUNNING: "4" };
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const s = await sb.json(
        ["spawn", "--on", "any", "--name", `spread-${i}`, `mock: gate=/root/spread-open\nspread ${i}`],
        {
          env,
        },
      );
      expect(s.exitCode, s.stderr).toBe(0);
      ids.push(s.data.id);
    }
    // Every turn waits for its host's gate until all twelve are placed: none ends while the spread is made.
    for (const h of hosts.slice(0, 3)) h.inside(["touch", "/root/spread-open"]);
    const waited = await sb.json(["wait", ...ids, "--timeout", "90s"], { env });
    expect(waited.exitCode, waited.stderr).toBe(0);
    const views = (await sb.json(["ls"])).data.children as {
      id: string;
      place: string;
      artifactDir: string;
    }[];
    const mine = views.filter((v) => ids.includes(v.id));
    const per = new Map<string, number>();
    for (const v of mine) per.set(v.place, (per.get(v.place) ?? 0) + 1);
    expect(Object.fromEntries(per)).toEqual({ "ssh:h1": 4, "ssh:h2": 4, "ssh:h3": 4 });
    // Turns that ran at the same time, from their records (one clock: the hosts are on this machine).
    const spans = mine.map((v) => {
      const ev = readEvents(v.artifactDir);
      return [
        Date.parse(ev.find((e) => e.type === "turn_started")!.ts),
        Date.parse(ev.find((e) => e.type === "completion")!.ts),
      ] as const;
    });
    const most = Math.max(...spans.map(([a]) => spans.filter(([b, c]) => b <= a && a < c).length));
    expect(most).toBeLessThanOrEqual(4);
    expect(most).toBeGreaterThan(1);
  }, 120_000);

  it("a host's tmux server killed mid-turn: the child settles lost", async () => {
    const spawned = await sb.json(["spawn", "--on", "h3", "mock: hang\nnever ends"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, artifactDir: dir } = spawned.data;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
    hosts[2]!.inside(["tmux", "-L", sb.socket, "kill-server"]);
    const waited = await sb.json(["wait", id, "--timeout", "40s"]);
    expect(waited.data.results[0]).toMatchObject({ id, status: "lost" });
  });

  it("refuses clearly, creating nothing: an old node there, a changed host key", async () => {
    const h4 = startSshHost(base, "h4");
    hosts.push(h4);
    // h4's node is too old: a stand-in over /usr/bin/node in h4's own mounts only.
    h4.inside(["sh", "-c", 'printf "#!/bin/sh\\necho v18.19.0\\n" > /tmp/node18 && chmod +x /tmp/node18']);
    h4.inside(["mount", "--bind", "/tmp/node18", process.execPath]);
    expect(
      (await sb.run(["hosts", "add", "h4", "h4", "--ssh-config", h4.config, "--workdir", "/root"])).exitCode,
    ).toBe(0);
    const count = async () => (await sb.json(["ls"])).data.children.length;
    let before = await count();
    const old = await sb.run(["spawn", "--on", "h4", "hello"]);
    expect(old.exitCode).not.toBe(0);
    expect(old.stderr.trim().split("\n")).toHaveLength(1);
    expect(old.stderr).toMatch(/host h4 runs node v18\.19\.0; Node 20 or newer is needed there/);
    const check = await sb.json(["hosts", "check", "h4"]);
    expect(check.exitCode).toBe(1);
    expect(check.data.node).toMatchObject({ version: "v18.19.0", ok: false });

    // A --node that is not there.
    const badNode = ["hosts", "add", "nonode", "h1", "--ssh-config", hosts[0]!.config, "--workdir", "/root"];
    expect((await sb.run([...badNode, "--node", "/opt/none/bin/node"])).exitCode).toBe(0);
    const nonode = await sb.run(["spawn", "--on", "nonode", "hello"]);
    expect(nonode.exitCode).not.toBe(0);
    expect(nonode.stderr).toContain("host nonode: /opt/none/bin/node does not run there");
    // The one it names when it is there.
    expect((await sb.run([...badNode, "--node", process.execPath])).exitCode).toBe(0);
    const named = await sb.json(["spawn", "--on", "nonode", "--wait", "with the node named"]);
    expect(named.exitCode, named.stderr).toBe(0);
    // The refused spawns above made nothing: only this one was added.
    expect(await count()).toBe(before + 1);
    before += 1;

    // The TUI mode, which needs a native addon the far side does not ship.
    const tui = await sb.run(["spawn", "--on", "h1", "--agent", "claude", "--tui", "hello"]);
    expect(tui.exitCode).not.toBe(0);
    expect(tui.stderr.trim().split("\n")).toHaveLength(1);
    expect(tui.stderr).toContain("mode tui is not available in place ssh:h1");

    // A host with no --workdir, where this working directory does not exist (the host's /tmp is its own).
    expect((await sb.run(["hosts", "add", "nowd", "h1", "--ssh-config", hosts[0]!.config])).exitCode).toBe(0);
    const nowd = await sb.run(["spawn", "--on", "nowd", "hello"]);
    expect(nowd.exitCode).toBe(2);
    expect(nowd.stderr.trim().split("\n")).toHaveLength(1);
    expect(nowd.stderr).toContain(`host nowd has no folder ${sb.cwd} (this working directory)`);

    // A host whose key is not the one known for it: ssh refuses, and so does muster, in one line.
    const config = path.join(base, "hk-config");
    const known = path.join(base, "hk-known");
    const h2key = fs
      .readFileSync(path.join(base, "h2", "known_hosts"), "utf8")
      .split(" ")
      .slice(1)
      .join(" ");
    fs.writeFileSync(known, `test-h1 ${h2key}`);
    fs.writeFileSync(
      config,
      fs
        .readFileSync(hosts[0]!.config, "utf8")
        .replace(/^Host h1$/m, "Host hk")
        .replace(/UserKnownHostsFile .*/, `UserKnownHostsFile ${known}`),
    );
    expect((await sb.run(["hosts", "add", "hk", "hk", "--ssh-config", config])).exitCode).toBe(0);
    const changed = await sb.run(["spawn", "--on", "hk", "hello"]);
    expect(changed.exitCode).not.toBe(0);
    expect(changed.stderr.trim().split("\n")).toHaveLength(1);
    expect(changed.stderr).toMatch(/Host key verification failed/);
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });

  it("a workflow's steps run on two hosts; MCP takes on; top shows each child's host", async () => {
    const file = path.join(sb.cwd, "two-hosts.toml");
    fs.writeFileSync(
      file,
      [
        'name = "two-hosts"',
        'description = "one step on each host"',
        "[[steps]]",
        'id = "first"',
        'agent = "mock"',
        'on = "h1"',
        'prompt = "first step: {{input}}"',
        "[[steps]]",
        'id = "second"',
        'agent = "mock"',
        'on = "h2"',
        'needs = ["first"]',
        'prompt = "second step"',
        "",
      ].join("\n"),
    );
    const run = await sb.json(["workflow", "run", file, "a change", "--keep"], { timeout: 90_000 });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.data.status).toBe("completed");
    const ls = (await sb.json(["ls"])).data.children as { id: string; place: string }[];
    const placeOf = (id: string) => ls.find((c) => c.id === id)?.place;
    expect(run.data.steps.map((st: { childId: string }) => placeOf(st.childId))).toEqual([
      "ssh:h1",
      "ssh:h2",
    ]);

    const client = await connectMcp(sb);
    let viaMcp: { id?: string; results?: { id: string }[]; status: string };
    try {
      const r = await client.callTool(
        { name: "subagents_run", arguments: { prompt: "through MCP", on: "h2" } },
        undefined,
        { timeout: 50_000 },
      );
      const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
      expect(r.isError, text).toBeFalsy();
      viaMcp = JSON.parse(text);
    } finally {
      await client.close();
    }
    expect(viaMcp.status).toBe("completed");
    const mcpId = viaMcp.id ?? viaMcp.results?.[0]?.id ?? "";
    expect((await sb.json(["status", mcpId])).data.place).toBe("ssh:h2");

    await withTop(sb, async ({ frame, row }) => {
      await until(() => row(mcpId), 15_000);
      expect(frame()).toMatch(/ HOST /);
      expect(row(mcpId)).toMatch(/ h2 /);
      expect(frame()).toMatch(/^hosts: h1 \d+ \(\d+ working\) · h2 \d+ \(\d+ working\)/m);
    });
  }, 150_000);

  it("a host that stops answering mid-turn is unreachable, a wait gives up on it after the bound, and nothing is lost when it is back", async () => {
    const env = { MUSTER_UNREACHABLE_SECONDS: "3" };
    const spawned = await sb.json([
      "spawn",
      "--on",
      "h1",
      "mock: gate=/root/partition-open\nthrough a partition",
    ]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, artifactDir: dir } = spawned.data;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
    // The partition: h1's sshd and its sessions end (the link with them); the child's host and its tmux
    // server, which are not sshd's, go on there.
    const h1dir = path.join(base, "h1");
    const netId = `net:[${fs.statSync(path.join(h1dir, "ns.net")).ino}]`;
    const sshd = () =>
      pidsInNamespace("net", netId).filter((pid) => {
        try {
          return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("sshd");
        } catch {
          return false;
        }
      });
    for (const pid of sshd()) process.kill(pid, "SIGKILL");
    await until(
      async () => (await sb.json(["status", id], { env })).data.live.state === "unreachable",
      20_000,
    );
    const st = (await sb.json(["status", id], { env })).data;
    expect(st.live.detail).toMatch(/^ssh:h1 does not answer: /);
    // Meanwhile the turn finishes there, unseen.
    hosts[0]!.inside(["touch", "/root/partition-open"]);
    const gaveUp = await sb.json(["wait", id, "--timeout", "30s"], { env });
    expect(gaveUp.exitCode).not.toBe(0);
    expect(gaveUp.data.results[0]).toMatchObject({ id, status: "lost", unreachable: true });
    expect(gaveUp.data.results[0].reason).toMatch(/ssh:h1 has not answered for \d+ s/);
    // The host answers again: the mirror catches up, and the turn's real result is delivered, once.
    hosts[0]!.inside([
      "/usr/sbin/sshd",
      "-f",
      path.join(h1dir, "sshd_config"),
      "-E",
      path.join(h1dir, "sshd.log"),
    ]);
    // (A wait started while the mark is older than the bound gives up at once: the keeper's next try clears it.)
    await until(
      async () => (await sb.json(["status", id], { env })).data.live.state !== "unreachable",
      30_000,
    );
    const back = await sb.json(["wait", id, "--timeout", "40s"], { env });
    expect(back.exitCode, back.stderr).toBe(0);
    expect(back.data.results[0]).toMatchObject({ id, status: "completed" });
    expect(readEvents(dir).filter((e) => e.type === "completion")).toHaveLength(1);
    expect((await sb.json(["status", id])).data.live.state).not.toBe("unreachable");
  }, 120_000);

  it("hands a host only muster's settings and the variables named for it; cancel ends the turn's processes there; rm removes its files there", async () => {
    const env = { MU_SECRET: "not-for-the-host", MU_NAMED: "named-for-h2" };
    const h2 = hosts[1]!;
    const readd = await sb.run([
      "hosts",
      "add",
      "h2",
      "h2",
      "--ssh-config",
      h2.config,
      "--workdir",
      "/root",
      "--env",
      "MU_NAMED",
    ]);
    expect(readd.exitCode, readd.stderr).toBe(0);
    expect((await sb.run(["hosts", "check", "h2", "--env"])).stdout).toMatch(/MU_NAMED/);
    const shown = await sb.run(
      [
        "spawn",
        "--on",
        "h2",
        "--agent",
        "command",
        "--wait",
        "show env",
        "--",
        "sh",
        "-c",
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, in a script for sh
        'echo "${MU_SECRET:-unset} ${MU_NAMED:-unset} $HOME"',
      ],
      { env },
    );
    expect(shown.exitCode, shown.stderr).toBe(0);
    // The host's own HOME (its environment underneath), the named variable, and not the other one.
    expect(shown.stdout).toContain("unset named-for-h2 /root");
    expect(shown.stdout).not.toContain("not-for-the-host");

    const spawned = await sb.json(["spawn", "--on", "h2", "mock: hang\nto be cancelled"]);
    const { id, artifactDir: dir } = spawned.data;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
    const runner = readEvents(dir).find((e) => e.type === "runner_started")!.pid as number;
    const cancelled = await sb.json(["cancel", id]);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    // (The test hosts share this machine's pid space: the runner there is a process here too.)
    await until(() => !fs.existsSync(`/proc/${runner}`), 15_000);
    await until(() => readEvents(dir).some((e) => e.type === "child_exited"), 15_000);
    const far = farDir(dir);
    expect(existsOn(h2, far)).toBe(true);
    const removed = await sb.run(["rm", id]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);
    await until(() => !existsOn(h2, far), 15_000);
  });

  it("a host whose disk is full refuses the install in one line", async () => {
    const h5 = startSshHost(base, "h5");
    hosts.push(h5);
    // A tiny disk under the remote user's state root, in h5's own mounts only.
    h5.inside([
      "sh",
      "-c",
      "mkdir -p /root/.local/state/muster && mount -t tmpfs -o size=64k tiny /root/.local/state/muster",
    ]);
    expect(
      (await sb.run(["hosts", "add", "h5", "h5", "--ssh-config", h5.config, "--workdir", "/root"])).exitCode,
    ).toBe(0);
    const r = await sb.run(["hosts", "install", "h5"]);
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/could not install muster's host files on h5 \(the disk there is full\)/);
    // Nothing half-made is left there.
    expect(h5.inside(["ls", "-A", "/root/.local/state/muster/install"]).trim()).toBe("");
  });

  it("--isolation worktree there: HEAD goes as a bundle, the child's commits come back; diff and merge work here", async () => {
    const { dir: repo, git: g } = makeRepo(path.join(sb.cwd, "repo"), "the parent's work\n");
    const work =
      'echo added > added.txt && git add added.txt && git -c user.name=c -c user.email=c@c commit -qm "child work" && echo left > left.txt && pwd';
    const spawned = await sb.run([
      "spawn",
      "--on",
      "h3",
      "--isolation",
      "worktree",
      "--cwd",
      repo,
      "--name",
      "far-wt",
      "--agent",
      "command",
      "--wait",
      "work",
      "--",
      "sh",
      "-c",
      work,
    ]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = (await sb.json(["status", "far-wt"])).data.id as string;
    const far = `/root/.local/state/muster/worktrees/${id}`;
    // The child worked in a clone there, on its branch; the parent's checkout was never there.
    expect(spawned.stdout).toContain(far);
    expect(hosts[2]!.inside(["git", "-C", far, "branch", "--show-current"]).trim()).toBe("muster/far-wt");
    expect(fs.existsSync(far)).toBe(false);
    expect(fs.existsSync(path.join(repo, "added.txt"))).toBe(false);
    // diff: a snapshot of the worktree comes back; the worktree there is left as it was.
    const diff = await sb.run(["diff", id]);
    expect(diff.exitCode, diff.stderr).toBe(0);
    expect(diff.stdout).toMatch(/added\.txt/);
    expect(diff.stdout).toMatch(/left\.txt/);
    expect(hosts[2]!.inside(["git", "-C", far, "status", "--porcelain"])).toContain("?? left.txt");
    // merge: the leftovers are committed there, the branch comes here, and merges into the parent's checkout.
    const merged = await sb.json(["merge", id]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(merged.data).toMatchObject({ merged: true, committedLeftovers: true });
    expect(fs.readFileSync(path.join(repo, "added.txt"), "utf8")).toBe("added\n");
    expect(fs.readFileSync(path.join(repo, "left.txt"), "utf8")).toBe("left\n");
    expect(g("log", "--format=%s", "-3")).toMatch(/child work/);
    const removed = await sb.run(["rm", id]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    await until(() => !existsOn(hosts[2]!, far), 15_000);
  }, 90_000);

  it("a profile's on names the hosts its children run on, and the spawn chooses among them", async () => {
    writeProjectAgent(sb, "far-mock", ["runner: mock", "on: [h2, h3]"], "A mock that runs on h2 or h3.");
    const places = new Set<string>();
    for (let i = 0; i < 2; i++) {
      const s = await sb.json([
        "spawn",
        "--agent",
        "far-mock",
        `mock: gate=/root/profile-open\nprofile ${i}`,
      ]);
      expect(s.exitCode, s.stderr).toBe(0);
      places.add((await sb.json(["status", s.data.id])).data.place);
    }
    // Two busy children, one on each host it names: the second went where the first was not.
    expect([...places].sort()).toEqual(["ssh:h2", "ssh:h3"]);
    for (const h of [hosts[1]!, hosts[2]!]) h.inside(["touch", "/root/profile-open"]);
    // An explicit --on still wins over the profile's.
    const here = await sb.json(["spawn", "--agent", "far-mock", "--on", "h1", "--wait", "on h1 after all"]);
    expect(here.exitCode, here.stderr).toBe(0);
    expect((await sb.json(["status", here.data.spawned.id])).data.place).toBe("ssh:h1");
    // A host with live children is not forgotten by accident.
    const rm = await sb.run(["hosts", "rm", "h1"]);
    expect(rm.exitCode).toBe(2);
    expect(rm.stderr).toMatch(/host h1 has \d+ live child(ren)? here .*: cancel them first, or give --force/);
    expect((await sb.json(["hosts", "ls"])).data.hosts.map((h: { name: string }) => h.name)).toContain("h1");
  }, 60_000);
});
