/**
 * A self-healing child on an SSH host (a real sshd test host in namespaces of its own, as in ssh-place.test.ts):
 * its host killed there mid-turn is found dead through the place, and a new host is started there on the same
 * turn by the same launcher a resume uses. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { controlDirFor } from "../../src/place/ssh/place.js";
import { readEvents, sandbox, until } from "../helpers/cli.js";
import { cancelAndStopKeeper } from "../helpers/place-keeper.js";
import { type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const sb = sandbox("mt-rfar");
let base = "";
let host: SshTestHost | undefined;

describe.skipIf(!available.ok && !process.env.CI)("--restart on-lost on an SSH host", () => {
  beforeAll(async () => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-rfar-"));
    host = startSshHost(base, "h1");
    const added = await sb.run([
      "hosts",
      "add",
      host.alias,
      host.alias,
      "--ssh-config",
      host.config,
      "--workdir",
      "/root",
    ]);
    expect(added.exitCode, added.stderr).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await cancelAndStopKeeper(sb, "ssh:h1");
    host?.stop();
    expect(await sb.cleanup()).toEqual([]);
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(controlDirFor(sb.home), { recursive: true, force: true });
  }, 60_000);

  it("a far host killed mid-turn is restarted there and the wait gets the completed turn", async () => {
    // The gate is a file on the far host's own /tmp.
    const spawned = await sb.json([
      "spawn",
      "--on",
      "h1",
      "--restart",
      "on-lost:2",
      "far task\nmock: gate=/tmp/gate-far",
    ]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, turnId, artifactDir: dir } = spawned.data;
    await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 30_000);
    const hostPid = readEvents(dir).find((e) => e.type === "child_started").pid as number;
    host!.inside(["kill", "-KILL", String(hostPid)]);
    const waiting = sb.json(["wait", id, "--timeout", "90s"], { timeout: 120_000 });
    await until(
      () => readEvents(dir).filter((e) => e.type === "runner_started" && e.turnId === turnId).length === 2,
      60_000,
    );
    host!.inside(["touch", "/tmp/gate-far"]);
    const waited = await waiting;
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.data.results[0]).toMatchObject({ id, turnId, status: "completed" });
    const evs = readEvents(dir);
    expect(evs.filter((e) => e.type === "restarted")).toEqual([
      expect.objectContaining({ turnId, attempt: 1, max: 2, by: "parent" }),
    ]);
    expect(evs.filter((e) => e.type === "child_started").map((e) => e.by)).toEqual(["spawn", "resume"]);
  }, 180_000);
});
