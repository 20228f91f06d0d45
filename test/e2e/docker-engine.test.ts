// The container test engine itself (test/helpers/docker-engine.ts): a private dockerd under a temp folder, and
// the image muster's image build (place/container/image.ts) makes from this machine's files in it, before any
// muster code runs a child in a container.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltImage, buildImage } from "../../src/place/container/image.js";
import {
  type DockerEngine,
  dockerAvailable,
  enginePids,
  mountsUnder,
  startDockerEngine,
} from "../helpers/docker-engine.js";

const available = dockerAvailable();
const TAG = "muster-test/base:e2e";
// Every container: no registry, no network, an init as PID 1.
const RUN = ["run", "--pull", "never", "--network", "none", "--init"];

describe.skipIf(!available.ok && !process.env.CI)(
  "docker test engine (real dockerd, base image from this machine)",
  () => {
    let base: string;
    let engine: DockerEngine | undefined;
    let image: BuiltImage;
    const build = () =>
      buildImage(
        { kind: "docker", cli: engine!.cli, env: { ...process.env, ...engine!.env } },
        { tag: TAG, agents: [] },
      );
    let container = "";

    beforeAll(async () => {
      if (!available.ok) throw new Error(available.why);
      base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
      engine = await startDockerEngine(base);
      image = await build();
      console.info(
        `docker test engine: ready in ${engine.startMs} ms; image ${TAG} ${(image.bytes / 1e6).toFixed(1)} MB in ${image.ms} ms`,
      );
      container = (
        await engine.dockerAsync([...RUN, "--detach", "--name", "mu-e2e", TAG, "sleep", "infinity"])
      ).trim();
    }, 120_000);

    afterAll(async () => {
      await engine?.stop();
      if (base) fs.rmSync(base, { recursive: true, force: true });
    }, 60_000);

    it("runs the machine's own node in a throwaway container, with the image's locale and PATH, under an init", async () => {
      const out = await engine!.dockerAsync([
        ...RUN,
        "--rm",
        TAG,
        "node",
        "-e",
        "console.log(JSON.stringify({ v: process.version, lang: process.env.LANG, ppid: process.ppid, sum: 6 * 7 }))",
      ]);
      expect(JSON.parse(out)).toEqual({ v: process.version, lang: "C.UTF-8", ppid: 1, sum: 42 });
      // Nothing left of it: --rm.
      expect(engine!.docker(["ps", "-aq"]).trim().split("\n")).toEqual([container.slice(0, 12)]);
    });

    it("a second build of the same files keeps the image the engine has", async () => {
      const again = await build();
      expect(again).toMatchObject({ id: image.id, built: false });
    });

    it("tmux works inside a running container: a detached session takes keys and shows their output", async () => {
      const d = engine!.dockerAsync;
      expect(await d(["exec", container, "tmux", "-V"])).toMatch(/^tmux \d/);
      await d(["exec", container, "tmux", "new-session", "-d", "-s", "t", "-x", "100", "-y", "20"]);
      await d(["exec", container, "tmux", "send-keys", "-t", "t", 'echo "in ""pane $((6 * 7)) é"', "Enter"]);
      let screen = "";
      for (let i = 0; i < 50 && !screen.includes("in pane 42 é"); i++) {
        await new Promise((r) => setTimeout(r, 100));
        screen = await d(["exec", container, "tmux", "capture-pane", "-p", "-t", "t"]);
      }
      expect(screen).toContain("in pane 42 é");
      await d(["exec", container, "tmux", "kill-server"]);
    });

    it("a file written inside the container (no mount) is not on this machine", async () => {
      const name = `mu-docker-inside-${process.pid}-${Date.now()}`;
      for (const dir of ["/tmp", "/root"]) {
        await engine!.dockerAsync(["exec", container, "sh", "-c", `echo written > ${dir}/${name}`]);
        expect(await engine!.dockerAsync(["exec", container, "cat", `${dir}/${name}`])).toBe("written\n");
        expect(fs.existsSync(path.join(dir, name))).toBe(false);
      }
    });

    it("the container has no network interface but lo, and no address", async () => {
      const dev = await engine!.dockerAsync(["exec", container, "cat", "/proc/net/dev"]);
      const ifaces = dev
        .split("\n")
        .slice(2)
        .map((l) => l.split(":")[0]!.trim())
        .filter(Boolean);
      expect(ifaces).toEqual(["lo"]);
      const nets = JSON.parse(
        await engine!.dockerAsync(["inspect", "--format", "{{json .NetworkSettings.Networks}}", container]),
      );
      expect(Object.keys(nets)).toEqual(["none"]);
      expect(nets.none.IPAddress).toBe("");
    });

    it("stop() leaves no dockerd, containerd or shim, nothing of the container, and no mount", async () => {
      const names = (pids: number[]) =>
        pids
          .map((p) => {
            try {
              return path.basename(fs.readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0")[0]!);
            } catch {
              return "";
            }
          })
          .sort();
      const ids = [container];
      // The check below is only worth something if it finds them while the engine runs.
      expect(names(enginePids(base, ids))).toEqual(
        expect.arrayContaining(["containerd", "containerd-shim-runc-v2", "dockerd", "docker-init", "sleep"]),
      );
      expect(mountsUnder(base).length).toBeGreaterThan(0);
      const t0 = performance.now();
      await engine!.stop();
      console.info(`docker test engine: stopped in ${Math.round(performance.now() - t0)} ms`);
      expect(names(enginePids(base, ids))).toEqual([]);
      expect(mountsUnder(base)).toEqual([]);
      expect(fs.existsSync(path.join(base, "docker.sock"))).toBe(false);
    });
  },
);
