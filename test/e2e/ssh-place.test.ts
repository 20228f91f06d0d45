/**
 * Children on SSH hosts (place `ssh:<host>`), against real sshd test hosts in namespaces of their own
 * (test/helpers/ssh-hosts.ts): each host has a private /tmp, /root and /run, so muster's far side, the
 * child's artifact dir and the host's tmux server are on that host's disk only, and the parent reads a
 * mirror that arrives over ssh. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, sandbox, until } from "../helpers/cli.js";
import { placeKeeperOf } from "../helpers/place-keeper.js";
import { type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const sb = sandbox("mt-ssh");
let base = "";
let hosts: SshTestHost[] = [];

/** A child's far artifact dir on a test host (the remote user is root: its state root is under /root). */
const farDir = (dir: string) => path.posix.join("/root/.local/state/muster", path.relative(sb.home, dir));
const existsOn = (h: SshTestHost, p: string) => {
  try {
    h.inside(["test", "-e", p]);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(!available.ok && !process.env.CI)("children on SSH hosts (real sshd test hosts)", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-ssh-"));
    hosts = [startSshHost(base, "h1"), startSshHost(base, "h2")];
    for (const h of hosts) {
      const added = await sb.run(["hosts", "add", h.alias, h.alias, "--ssh-config", h.config, "--workdir", "/root"]);
      expect(added.exitCode, added.stderr).toBe(0);
    }
  }, 60_000);

  afterAll(async () => {
    await sb.run(["cancel", "--all"]);
    for (const h of hosts) {
      const k = placeKeeperOf(sb.home, `ssh:${h.alias}`);
      await until(async () => (await k.dirs()).length === 0, 15_000).catch(() => undefined);
      await k.stop();
    }
    for (const h of hosts) h.stop();
    expect(await sb.cleanup()).toEqual([]);
    fs.rmSync(base, { recursive: true, force: true });
  }, 60_000);

  it("hosts ls, check and install report what each host has", async () => {
    const ls = await sb.json(["hosts", "ls"]);
    expect(ls.data.hosts.map((h: { name: string }) => h.name)).toEqual(["h1", "h2"]);
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
});
