/**
 * Children in containers of their own (place `container:<id>`), in each real engine this machine runs: a
 * private Docker engine (dockerd under a temp folder, no bridge, no iptables) and a private Podman storage
 * (runc; test/helpers/docker-engine.ts), with the image `muster image build` makes from this machine's
 * files. Containers get `--network none` (the mock needs no model API). Each child's host, its tmux server
 * and its files are inside its container; the parent reads a mirror that arrives over `<engine> exec`.
 * Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { readEvents, sandbox, until, writeProjectAgent } from "../helpers/cli.js";
import { CONTAINER_ENGINES, type DockerEngine, startDockerEngine } from "../helpers/docker-engine.js";
import { attachAndDetach, viewInWeb, withTop } from "../helpers/far-views.js";
import { makeRepo } from "../helpers/git-repo.js";
import { connectMcp } from "../helpers/mcp.js";
import { stopPlacedChildren } from "../helpers/place-keeper.js";

const containerOf = (id: string) => `muster-${id}`;

for (const { kind, available, start } of CONTAINER_ENGINES) {
  const sb = sandbox(`mt-ctr-${kind}`);
  let base = "";
  let engine: DockerEngine | undefined;

  /** The child's artifact dir inside its container (its root user's state root). */
  const farDir = (dir: string) =>
    path.posix.join("/root/.local/state/muster", path.relative(sb.home, dir).split(path.sep).join("/"));
  /** Runs argv in child `id`'s container. */
  const inside = (id: string, argv: string[]) => engine!.docker(["exec", containerOf(id), ...argv]);
  const containers = () => engine!.docker(["ps", "-a", "--format", "{{.Names}}"]).split("\n").filter(Boolean);
  /** The container's state (`running`, `exited`…), undefined when there is none. */
  const stateOf = (id: string) => {
    try {
      return engine!.docker(["inspect", "--format", "{{.State.Status}}", containerOf(id)]).trim();
    } catch {
      return undefined;
    }
  };

  describe.skipIf(!available.ok && !process.env.CI)(
    `children in containers (${kind}, a private engine)`,
    () => {
      beforeAll(async () => {
        if (!available.ok) throw new Error(available.why);
        base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
        engine = await start(base);
        Object.assign(sb.env, engine.env);
      }, 120_000);

      afterAll(async () => {
        await stopPlacedChildren(sb);
        await engine?.stop();
        const left = await sb.cleanup();
        expect(left).toEqual([]);
        if (base) fs.rmSync(base, { recursive: true, force: true });
      }, 90_000);

      it("image build makes an image from this machine's files, with muster's part in it; a second build keeps it", async () => {
        const built = await sb.json(["image", "build"], { timeout: 300_000 });
        expect(built.exitCode, built.stderr).toBe(0);
        expect(built.data).toMatchObject({ tag: "muster-agent:latest", from: "this machine", built: true });
        const stamp = built.data.muster as string;
        // node, tmux, git and muster's far side, installed where the probe looks: a child installs nothing.
        const run = (argv: string[]) =>
          engine!.docker([
            "run",
            "--rm",
            "--pull",
            "never",
            "--network",
            "none",
            "muster-agent:latest",
            ...argv,
          ]);
        expect(run(["node", "-e", "console.log(process.version)"]).trim()).toBe(process.version);
        expect(run(["tmux", "-V"])).toMatch(/^tmux \d/);
        expect(run(["git", "--version"])).toMatch(/^git version/);
        expect(run(["cat", "/root/.local/state/muster/install/current"]).trim()).toBe(stamp);
        const again = await sb.json(["image", "build"]);
        expect(again.data).toMatchObject({ built: false, id: built.data.id });
        const ls = await sb.json(["image", "ls"]);
        expect(ls.data).toMatchObject({
          engine: kind,
          // Podman names an image of no registry localhost/<name>.
          images: [{ tag: expect.stringMatching(/^(localhost\/)?muster-agent:latest$/), muster: stamp }],
        });
      }, 300_000);

      it("image build --from a base image copies muster's part into it (no builder); a child runs in it", async () => {
        // A base with node and tmux but none of muster: the image above, its install removed.
        const plain = `muster-plain-${kind}`;
        engine!.docker([
          "run",
          "--name",
          plain,
          "--pull",
          "never",
          "--network",
          "none",
          "muster-agent:latest",
          "rm",
          "-rf",
          "/root/.local",
        ]);
        engine!.docker(["commit", plain, "muster-test/plain:1"]);
        engine!.docker(["rm", plain]);
        const built = await sb.json(
          ["image", "build", "--from", "muster-test/plain:1", "--tag", "muster-test/from-base:1"],
          {
            timeout: 300_000,
          },
        );
        expect(built.exitCode, built.stderr).toBe(0);
        expect(built.data).toMatchObject({ from: "muster-test/plain:1", built: true });
        const spawned = await sb.json([
          "spawn",
          "--in",
          "container:muster-test/from-base:1",
          "--wait",
          "in a built-from-base image",
        ]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
        const missing = await sb.run(["image", "build", "--from", "muster-test/none:1", "--tag", "x:1"]);
        expect(missing.exitCode).not.toBe(0);
        expect(missing.stderr).toMatch(
          /base image muster-test\/none:1 is not in the \w+ engine \(pull it first\)/,
        );
      }, 300_000);

      it("spawn --in container: the child runs in its own container; wait, send, capture; its files are in there only", async () => {
        fs.writeFileSync(path.join(sb.cwd, "shared.txt"), "the parent's file\n");
        const spawned = await sb.json([
          "spawn",
          "--in",
          "container",
          "mock: tools=1\nfirst task in a container",
        ]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        const { id, artifactDir: dir } = spawned.data;
        const waited = await sb.json(["wait", id, "--timeout", "30s"]);
        expect(waited.exitCode, waited.stderr).toBe(0);
        expect(waited.data.results[0]).toMatchObject({ status: "completed" });
        const st = (await sb.json(["status", id])).data;
        expect(st).toMatchObject({ status: "idle", place: `container:${id}`, cwd: sb.cwd });
        expect(stateOf(id)).toBe("running");
        const labels = JSON.parse(
          engine!.docker(["inspect", "--format", "{{json .Config.Labels}}", containerOf(id)]),
        );
        expect(labels).toMatchObject({ "muster.child": id });
        // No network but lo (the mock needs no model API), and an init as PID 1.
        expect(
          engine!.docker(["inspect", "--format", "{{.HostConfig.NetworkMode}}", containerOf(id)]).trim(),
        ).toBe("none");
        expect(inside(id, ["cat", "/proc/1/cmdline"])).toMatch(/init|catatonit/);
        // The far log is the one the host wrote in the container; the mirror here is a copy of it, byte for byte.
        const far = farDir(dir);
        expect(inside(id, ["cat", path.posix.join(far, "events.ndjson")])).toBe(
          fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
        );
        expect(fs.existsSync(far)).toBe(false);
        // The working directory is there, read-only; nothing else of this machine's.
        expect(inside(id, ["cat", path.join(sb.cwd, "shared.txt")])).toBe("the parent's file\n");
        expect(() => inside(id, ["sh", "-c", `echo x > ${path.join(sb.cwd, "written.txt")}`])).toThrow(
          /Read-only file system/,
        );
        expect(() => inside(id, ["ls", sb.home])).toThrow(/No such file/);
        inside(id, ["sh", "-c", "echo inside > /tmp/only-inside && echo inside > /root/only-inside"]);
        expect(fs.existsSync("/tmp/only-inside")).toBe(false);
        expect(fs.existsSync("/root/only-inside")).toBe(false);
        // A follow-up goes out through the mirror and its answer comes back; capture reads the pane in there.
        const sent = await sb.json(["send", id, "--wait", "second task"]);
        expect(sent.exitCode, sent.stderr).toBe(0);
        expect(sent.data.results[0]).toMatchObject({ status: "completed" });
        const captured = await sb.run(["capture", id]);
        expect(captured.exitCode, captured.stderr).toBe(0);
        expect(captured.stdout).toContain("second task");
      });

      it("cancel stops the container (its files kept); resume starts it again on the same conversation", async () => {
        const spawned = await sb.json(["spawn", "--in", "container", "--wait", "before the cancel"]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        const { id, artifactDir: dir } = spawned.data.spawned;
        const turn = await sb.json(["send", id, "mock: sleep=30\na long one"]);
        expect(turn.exitCode, turn.stderr).toBe(0);
        await until(() => readEvents(dir).filter((e) => e.type === "runner_started").length === 2, 20_000);
        const cancelled = await sb.json(["cancel", id]);
        expect(cancelled.exitCode, cancelled.stderr).toBe(0);
        expect(cancelled.data.cancelled[0]).toMatchObject({ id, turnCancelled: true, by: "child" });
        expect(stateOf(id)).toBe("exited");
        const resumed = await sb.json(["spawn", "--resume", id, "--wait", "after the cancel"]);
        expect(resumed.exitCode, resumed.stderr).toBe(0);
        expect(resumed.data.results[0]).toMatchObject({ status: "completed" });
        expect(resumed.data.results[0].text).toContain("previous-task: before the cancel");
        expect(stateOf(id)).toBe("running");
        expect(readEvents(dir).filter((e) => e.type === "child_started")).toHaveLength(2);
      });

      it("in one long-lived process (the library, as the MCP server runs): a resume after a cancel starts the stopped container again", async () => {
        const m = createMuster({ env: sb.env, cwd: sb.cwd });
        const { id } = await m.spawn({ agent: "mock", prompt: "before the cancel", container: {} });
        expect((await m.wait([id], { timeoutMs: 60_000 })).results[0]).toMatchObject({ status: "completed" });
        await m.cancel(id);
        expect(stateOf(id)).toBe("exited");
        await m.resume(id, "after the cancel");
        const resumed = await m.wait([id], { timeoutMs: 60_000, withText: true });
        expect(resumed.results[0]).toMatchObject({ status: "completed" });
        expect(resumed.results[0]!.text).toContain("previous-task: before the cancel");
        expect(stateOf(id)).toBe("running");
      });

      it("attach runs docker exec -it … tmux attach on a real terminal; the child goes on after a detach", async () => {
        const spawned = await sb.json(["spawn", "--in", "container", "--wait", "a task to look at"]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        const id = spawned.data.spawned.id as string;
        const printed = (await sb.json(["attach", "--print", id])).data.command as string[];
        expect(printed.slice(1, 4)).toEqual(["exec", "-it", containerOf(id)]);
        expect(await attachAndDetach(sb, id, "a task to look at")).toBe(0);
        expect((await sb.json(["status", id])).data.status).toBe("idle");
        // The web page's terminal: the viewer runs in the container through exec -it, read-only here.
        const seen = await viewInWeb(sb, id, "a task to look at");
        expect(seen.text).not.toContain("[server:");
      });

      it("a container killed mid-turn, or removed: the child settles lost within the liveness bound", async () => {
        for (const how of ["kill", "rm"] as const) {
          const spawned = await sb.json(["spawn", "--in", "container", `mock: hang\n${how} me`]);
          expect(spawned.exitCode, spawned.stderr).toBe(0);
          const { id, artifactDir: dir } = spawned.data;
          await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
          engine!.docker(how === "kill" ? ["kill", containerOf(id)] : ["rm", "--force", containerOf(id)]);
          const waited = await sb.json(["wait", id, "--timeout", "40s"]);
          expect(waited.data?.results?.[0], waited.stderr).toMatchObject({ id, status: "lost" });
          expect(readEvents(dir).filter((e) => e.type === "child_exited")).toHaveLength(1);
          // Killed: the container is started again so its end is recorded in there, the log's home.
          if (how === "kill")
            expect(inside(id, ["cat", path.posix.join(farDir(dir), "events.ndjson")])).toBe(
              fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
            );
          // Removed: the record here is the only one now, and says so no more as a mirror.
          else expect(fs.existsSync(path.join(dir, ".mirror.json"))).toBe(false);
        }
      }, 120_000);

      // Podman has no daemon to restart.
      if (kind === "docker")
        it("the engine restarted under a running turn: its container stops with it, and the child settles lost", async () => {
          const spawned = await sb.json(["spawn", "--in", "container", "--wait", "before a restart"]);
          expect(spawned.exitCode, spawned.stderr).toBe(0);
          const { id, artifactDir: dir } = spawned.data.spawned;
          expect((await sb.json(["send", id, "mock: hang\nacross a restart"])).exitCode).toBe(0);
          await until(() => readEvents(dir).filter((e) => e.type === "runner_started").length === 2, 20_000);
          await engine!.stop({ keepContainers: true });
          engine = await startDockerEngine(base);
          Object.assign(sb.env, engine.env);
          expect(stateOf(id)).toBe("exited");
          const waited = await sb.json(["wait", id, "--timeout", "40s"]);
          expect(waited.data.results[0]).toMatchObject({ id, status: "lost" });
          // A new turn runs in the same container, started again.
          const resumed = await sb.json(["spawn", "--resume", id, "--wait", "after the restart"]);
          expect(resumed.exitCode, resumed.stderr).toBe(0);
          expect(resumed.data.results[0]).toMatchObject({ status: "completed" });
        }, 120_000);

      it("--isolation worktree: HEAD goes in as a bundle (no mount of the checkout), the work comes back to merge", async () => {
        const { dir: repo, git: g } = makeRepo(path.join(sb.cwd, "repo"), "the parent's work\n");
        const work =
          'echo added > added.txt && git add added.txt && git -c user.name=c -c user.email=c@c commit -qm "child work" && echo left > left.txt && pwd';
        const spawned = await sb.run([
          ...["spawn", "--in", "container", "--isolation", "worktree", "--cwd", repo, "--name", "ctr-wt"],
          ...["--agent", "command", "--wait", "work", "--", "sh", "-c", work],
        ]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        const id = (await sb.json(["status", "ctr-wt"])).data.id as string;
        const far = `/root/.local/state/muster/worktrees/${id}`;
        expect(spawned.stdout).toContain(far);
        // The checkout itself is not in the container at all.
        const mounts = JSON.parse(
          engine!.docker(["inspect", "--format", "{{json .Mounts}}", containerOf(id)]),
        );
        expect(mounts).toEqual([]);
        expect(fs.existsSync(path.join(repo, "added.txt"))).toBe(false);
        const merged = await sb.json(["merge", id]);
        expect(merged.exitCode, merged.stderr).toBe(0);
        expect(merged.data).toMatchObject({ merged: true, committedLeftovers: true });
        expect(fs.readFileSync(path.join(repo, "added.txt"), "utf8")).toBe("added\n");
        expect(fs.readFileSync(path.join(repo, "left.txt"), "utf8")).toBe("left\n");
        expect(g("log", "--format=%s", "-3")).toMatch(/child work/);
      }, 90_000);

      it("refuses in one line and leaves no container behind: no such image, a CLI the image lacks, a bad network", async () => {
        const before = containers().length;
        const specs = () => fs.readdirSync(path.join(sb.home, "containers")).length;
        const specsBefore = specs();
        const count = async () => (await sb.json(["ls"])).data.children.length;
        const children = await count();
        const cases: [string[], RegExp][] = [
          [
            ["--in", "container:no-such:1"],
            new RegExp(`image no-such:1 is not in the ${kind} engine; make it with: .*image build`),
          ],
          [
            ["--agent", "pi", "--in", "container"],
            /pi, which is not installed in place container:\S+ \(pi is not on PATH\); image muster-agent:latest lacks it: make one that has it with .*image build --agent pi/,
          ],
          [
            ["--in", "container", "--network", "nowhere"],
            new RegExp(`container network nowhere is not in the ${kind} engine`),
          ],
          [["--in", "container", "--memory", "lots"], /container memory "lots" is not a size/],
          [["--network", "none"], /--network goes with --in container/],
        ];
        for (const [flags, said] of cases) {
          const r = await sb.run(["spawn", ...flags, "refused"]);
          expect(r.exitCode, r.stderr).toBe(2);
          expect(r.stderr.trim().split("\n")).toHaveLength(1);
          expect(r.stderr).toMatch(said);
        }
        expect(containers()).toHaveLength(before);
        expect(await count()).toBe(children);
        expect(specs()).toBe(specsBefore);
      });

      it("a workflow step, MCP and a profile's container: put children in containers; top shows where each runs", async () => {
        const file = path.join(sb.cwd, "in-containers.toml");
        fs.writeFileSync(
          file,
          [
            'name = "in-containers"',
            'description = "one step in a container, one here"',
            "[[steps]]",
            'id = "boxed"',
            'agent = "mock"',
            'container = "muster-agent:latest"',
            'prompt = "first step: {{input}}"',
            "[[steps]]",
            'id = "here"',
            'agent = "mock"',
            'needs = ["boxed"]',
            'prompt = "second step"',
            "",
          ].join("\n"),
        );
        const run = await sb.json(["workflow", "run", file, "a change", "--keep"], { timeout: 90_000 });
        expect(run.exitCode, run.stderr).toBe(0);
        expect(run.data.status).toBe("completed");
        const ls = (await sb.json(["ls"])).data.children as { id: string; place: string }[];
        const placeOf = (id: string) => ls.find((c) => c.id === id)?.place;
        const [boxed, here] = run.data.steps.map((st: { childId: string }) => st.childId as string);
        expect([placeOf(boxed), placeOf(here)]).toEqual([`container:${boxed}`, "local"]);

        // A profile's container: its children each get one, with its limits; the call's fields win over it.
        writeProjectAgent(sb, "boxed-mock", ["runner: mock", "container:", "  memory: 256m", "  cpus: 1"]);
        const viaProfile = await sb.json([
          "spawn",
          "--agent",
          "boxed-mock",
          "--cpus",
          "0.5",
          "--in",
          "container",
          "--wait",
          "boxed by its profile",
        ]);
        expect(viaProfile.exitCode, viaProfile.stderr).toBe(0);
        const pid = viaProfile.data.spawned.id as string;
        expect(
          engine!
            .docker([
              "inspect",
              "--format",
              "{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}}",
              containerOf(pid),
            ])
            .trim(),
        ).toBe(`${256 * 1024 * 1024} 500000000`);

        const client = await connectMcp(sb);
        let viaMcp: { id?: string; status: string };
        try {
          const r = await client.callTool(
            { name: "subagents_run", arguments: { prompt: "through MCP", container: { network: "none" } } },
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
        const mcpId = viaMcp.id ?? "";
        expect((await sb.json(["status", mcpId])).data.place).toBe(`container:${mcpId}`);

        await withTop(sb, async ({ frame, row }) => {
          await until(() => row(mcpId), 15_000);
          expect(frame()).toMatch(/ HOST /);
          expect(row(mcpId)).toMatch(/ container /);
          expect(row(here)).not.toMatch(/ container /);
          expect(frame()).toMatch(/^hosts: local \d+ \(\d+ working\) · container \d+ \(\d+ working\)/m);
        });
      }, 150_000);

      it("rm removes the child's container and its record of it", async () => {
        const spawned = await sb.json(["spawn", "--in", "container", "--wait", "to be removed"]);
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        const id = spawned.data.spawned.id as string;
        expect(stateOf(id)).toBe("running");
        const removed = await sb.run(["rm", "--force", id]);
        expect(removed.exitCode, removed.stderr).toBe(0);
        expect(stateOf(id)).toBeUndefined();
        expect(fs.existsSync(path.join(sb.home, "containers", `${id}.json`))).toBe(false);
      });
    },
  );
}
