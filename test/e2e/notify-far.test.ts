/**
 * Notifications of what no local host can tell: a child on another machine (an SSH test host, whose own
 * network cannot reach this machine's 127.0.0.1) is told of from this machine by its place's keeper, once per
 * event, while the far host tells nobody even with a notify config of its own; and a child whose host was
 * killed is told of as `lost` once, by whichever parent recorded it, however many noticed. The SSH part is
 * root only (test/helpers/ssh-hosts.ts).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlDirFor } from "../../src/place/ssh/place.js";
import { pidAlive, processesWithEnv, readEvents, sandbox, until } from "../helpers/cli.js";
import { hooks, type Receiver, receiver } from "../helpers/notify-receiver.js";
import { placeKeeperOf } from "../helpers/place-keeper.js";
import { existsOn, type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const sb = sandbox("mt-nfar");
const available = sshHostsAvailable();
let rx: Receiver;
let base = "";
let host: SshTestHost | undefined;

/** The notices of child `id`, in the order they came. */
const noticesOf = (id: string) => hooks(rx, "/hook").filter((n) => n.child === id);
/** The detached senders of a parent's notices (src/notify/send-main.ts) still running for this sandbox. */
const senders = () =>
  processesWithEnv(`MUSTER_HOME=${sb.home}`).filter((p) => p.cmdline.includes("send-main.js"));

/** A child whose turn hangs, once its runner runs: its id, its (mirror) dir and its host's pid. */
async function hangingChild(args: string[] = []) {
  const spawned = await sb.json(["spawn", ...args, "mock: hang\nnever ends"]);
  expect(spawned.exitCode, spawned.stderr).toBe(0);
  const { id, artifactDir: dir } = spawned.data as { id: string; artifactDir: string };
  await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 30_000);
  const hostPid = readEvents(dir).find((e) => e.type === "child_started")!.pid as number;
  return { id, dir, hostPid };
}

/** Three parents notice the dead host at once; resolves once one lost notice came and no sender runs. */
async function noticedByThree(id: string, dir: string) {
  await Promise.all([
    sb.json(["status", id]),
    sb.json(["ls"]),
    sb.json(["wait", id, "--timeout", "40s"], { timeout: 60_000 }),
  ]);
  const exited = readEvents(dir).filter((e) => e.type === "child_exited");
  expect(exited).toEqual([expect.objectContaining({ reason: "lost", by: "parent" })]);
  await until(() => noticesOf(id).length > 0, 20_000);
  await until(() => senders().length === 0, 20_000);
  return exited[0]!.eventId as string;
}

beforeAll(async () => {
  rx = await receiver();
  const added = await sb.run(["notify", "add", "webhook", rx.url("/hook")]);
  expect(added.exitCode, added.stderr).toBe(0);
});

afterAll(async () => {
  await sb.run(["cancel", "--all"]);
  if (host) {
    const k = placeKeeperOf(sb.home, `ssh:${host.alias}`);
    await until(async () => (await k.dirs()).length === 0, 15_000).catch(() => undefined);
    await k.stop();
    host.stop();
  }
  await rx.close();
  expect(await sb.cleanup()).toEqual([]);
  if (base) fs.rmSync(base, { recursive: true, force: true });
  fs.rmSync(controlDirFor(sb.home), { recursive: true, force: true });
}, 60_000);

describe("a child recorded lost by its parent", () => {
  it("a host killed with SIGKILL: one `lost` notice, however many parents notice the death", async () => {
    const c = await hangingChild();
    process.kill(c.hostPid, "SIGKILL");
    await until(() => !pidAlive(c.hostPid), 5000);
    const eventId = await noticedByThree(c.id, c.dir);
    const got = noticesOf(c.id);
    expect(got).toEqual([
      expect.objectContaining({
        event: "lost",
        eventId,
        agent: "mock",
        title: expect.stringMatching(/was lost$/),
      }),
    ]);
    expect(got[0]!.text).toMatch(/child host \(pid \d+\) is gone/);
  });
});

describe.skipIf(!available.ok && !process.env.CI)("a child on an SSH host (real sshd test host)", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-nfar-"));
    host = startSshHost(base, "n1");
    const added = await sb.run([
      ...["hosts", "add", host.alias, host.alias],
      ...["--ssh-config", host.config, "--workdir", "/root"],
    ]);
    expect(added.exitCode, added.stderr).toBe(0);
    // A notify config of the far host's own, with a target it can reach: a far host that told anyone would
    // leave this file there.
    const config = { notify: [{ id: "far001", kind: "command", argv: ["sh", "-c", "echo x >> /tmp/told"] }] };
    host.inside(["mkdir", "-p", "/root/.config/muster"]);
    host.inside(["sh", "-c", `echo '${JSON.stringify(config)}' > /root/.config/muster/config.json`]);
  }, 60_000);

  it("each finished turn is told of once, from this machine; the far host tells nobody", async () => {
    const spawned = await sb.json(["spawn", "--on", host!.alias, "--wait", "first task there"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.spawned.id as string;
    const dir = (await sb.json(["status", id])).data.artifactDir as string;
    await until(() => noticesOf(id).length === 1, 20_000);
    // A second turn's notice comes after any repeat of the first's would have.
    const sent = await sb.json(["send", id, "--wait", "second task"]);
    expect(sent.exitCode, sent.stderr).toBe(0);
    await until(() => noticesOf(id).length >= 2, 20_000);
    const completions = readEvents(dir).filter((e) => e.type === "completion");
    expect(completions.map((e) => e.status)).toEqual(["completed", "completed"]);
    expect(noticesOf(id).map((n) => [n.event, n.eventId])).toEqual(
      completions.map((e) => ["finished", e.eventId]),
    );
    expect(noticesOf(id)[0]).toMatchObject({ agent: "mock", status: "completed" });
    expect(existsOn(host!, "/tmp/told")).toBe(false);
  });

  it("its host killed with SIGKILL: one `lost` notice, sent here by the parent that recorded it", async () => {
    const c = await hangingChild(["--on", host!.alias]);
    // The test host shares this machine's pid namespace: the pid its host recorded is the one to kill.
    process.kill(c.hostPid, "SIGKILL");
    await until(() => !pidAlive(c.hostPid), 5000);
    const eventId = await noticedByThree(c.id, c.dir);
    // The record came back through the mirror, which the keeper read before it let the mirror go.
    await until(async () => !(await placeKeeperOf(sb.home, `ssh:${host!.alias}`).keeps(c.dir)), 20_000);
    expect(noticesOf(c.id)).toEqual([expect.objectContaining({ event: "lost", eventId, agent: "mock" })]);
    expect(existsOn(host!, "/tmp/told")).toBe(false);
  });
});
