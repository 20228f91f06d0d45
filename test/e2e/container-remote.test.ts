/**
 * Children in containers of a remote engine: a private dockerd inside an SSH test host's namespaces
 * (test/helpers/ssh-hosts.ts), reached the way a user reaches one, `DOCKER_HOST=ssh://root@<host>` (the docker
 * CLI runs `ssh <host> docker system dial-stdio`). It is muster's one container code path; what differs is
 * that this machine's folders are not on the engine's machine (the host has its own /tmp). The docker CLI's
 * ssh reads the test host's ssh config through a wrapper `ssh` first on its PATH. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandbox } from "../helpers/cli.js";
import { type DockerEngine, dockerAvailable, startDockerEngine } from "../helpers/docker-engine.js";
import { makeRepo } from "../helpers/git-repo.js";
import { stopPlacedChildren } from "../helpers/place-keeper.js";
import { type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const docker = dockerAvailable();
const ssh = sshHostsAvailable();
const available = docker.ok && ssh.ok;
const sb = sandbox("mt-ctr-remote");
let base = "";
let host: SshTestHost | undefined;
let engine: DockerEngine | undefined;

const stateOf = (id: string) => {
  try {
    return engine!.docker(["inspect", "--format", "{{.State.Status}}", `muster-${id}`]).trim();
  } catch {
    return undefined;
  }
};

describe.skipIf(!available && !process.env.CI)(
  "children in containers of a remote engine (DOCKER_HOST=ssh://)",
  () => {
    beforeAll(async () => {
      if (!docker.ok) throw new Error(docker.why);
      if (!ssh.ok) throw new Error(ssh.why);
      base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-ssh-"));
      const h = startSshHost(base, "eh");
      host = h;
      // The engine's folder is the host's own (bind-mounted into it, so its socket is reachable from here too).
      const engineDir = path.join(base, "eh", "engine");
      fs.mkdirSync(engineDir);
      engine = await startDockerEngine(engineDir, { wrap: h.enter });
      // On the host, `docker system dial-stdio` reaches the engine at the default socket of its own /run.
      h.inside(["ln", "-s", path.join(engineDir, "docker.sock"), "/run/docker.sock"]);
      const bin = path.join(base, "sshbin");
      fs.mkdirSync(bin);
      fs.writeFileSync(path.join(bin, "ssh"), `#!/bin/sh\nexec /usr/bin/ssh -F '${h.config}' "$@"\n`, {
        mode: 0o755,
      });
      Object.assign(sb.env, {
        DOCKER_HOST: `ssh://root@${h.alias}`,
        DOCKER_CONFIG: engine.env.DOCKER_CONFIG,
        PATH: `${bin}:${sb.env.PATH}`,
      });
    }, 120_000);

    afterAll(async () => {
      await stopPlacedChildren(sb);
      await engine?.stop();
      host?.stop();
      expect(await sb.cleanup()).toEqual([]);
      if (base) fs.rmSync(base, { recursive: true, force: true });
    }, 90_000);

    it("image build goes to the remote engine; a child there runs, is waited for, cancelled and removed", async () => {
      const built = await sb.json(["image", "build"], { timeout: 300_000 });
      expect(built.exitCode, built.stderr).toBe(0);
      expect(engine!.docker(["image", "ls", "--format", "{{.Repository}}:{{.Tag}}"])).toContain(
        "muster-agent:latest",
      );
      // This machine's working directory is not on the engine's machine: it is not mounted, and the child works
      // in the container's home.
      const spawned = await sb.json([
        "spawn",
        "--in",
        "container",
        "--mount",
        "none",
        "--wait",
        "on a remote engine",
      ]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
      const id = spawned.data.spawned.id as string;
      expect((await sb.json(["status", id])).data).toMatchObject({ place: `container:${id}`, cwd: "/root" });
      expect(stateOf(id)).toBe("running");
      // The container's processes are the host's: its init runs in the host's network namespace's engine.
      const sent = await sb.json(["send", id, "--wait", "again"]);
      expect(sent.data.results[0]).toMatchObject({ status: "completed" });
      expect((await sb.run(["cancel", id])).exitCode).toBe(0);
      expect(stateOf(id)).toBe("exited");
      expect((await sb.run(["rm", id])).exitCode).toBe(0);
      expect(stateOf(id)).toBeUndefined();
    }, 300_000);

    it("a working directory that is only here is refused in one line, never mounted as an empty folder", async () => {
      const before = engine!.docker(["ps", "-aq"]);
      const r = await sb.run(["spawn", "--in", "container", "refused"]);
      expect(r.exitCode, r.stderr).not.toBe(0);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/could not make the child's container: .*bind source path does not exist/);
      expect(engine!.docker(["ps", "-aq"])).toBe(before);
    });

    it("--isolation worktree needs no mount: HEAD goes in as a bundle over the engine's ssh, the work comes back", async () => {
      const { dir: repo } = makeRepo(path.join(sb.cwd, "repo"), "here\n");
      const spawned = await sb.run([
        ...["spawn", "--in", "container", "--isolation", "worktree", "--cwd", repo, "--agent", "command"],
        ...["--wait", "work", "--", "sh", "-c", "echo remote > remote.txt"],
      ]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const id = (await sb.json(["ls"])).data.children.find((c: { cwd: string }) =>
        c.cwd.includes("worktrees"),
      )?.id as string;
      const merged = await sb.json(["merge", id]);
      expect(merged.exitCode, merged.stderr).toBe(0);
      expect(fs.readFileSync(path.join(repo, "remote.txt"), "utf8")).toBe("remote\n");
    }, 120_000);
  },
);
