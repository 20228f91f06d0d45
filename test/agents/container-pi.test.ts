/**
 * A real agent CLI (the pinned pi) as a child in a container of its own, in each real engine (a private
 * Docker engine and private Podman storage: test/helpers/docker-engine.ts), against the scripted endpoint. The image is the one `muster image build
 * --agent pi --offline` makes (pi from npm's cache: no registry). The container has no network of its own: it
 * shares the network namespace of a "netbox" container (`network: container:<netbox>`), whose only interface
 * is its loopback, where this test runs the endpoint (nsenter): a model request the endpoint sees can only
 * have come from a container on that namespace. pi's config goes in as a read-write mount of its own folder,
 * its settings as the profile's env. Root only.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { prepareCli } from "../fixtures/cli-setup.mjs";
import { readEvents, sandbox, waitedJson, writeProjectAgent } from "../helpers/cli.js";
import { CONTAINER_ENGINES, type DockerEngine } from "../helpers/docker-engine.js";
import { type NetnsEndpoint, startEndpointIn } from "../helpers/netns-endpoint.js";
import { placeKeeperOf } from "../helpers/place-keeper.js";

const IMAGE = "muster-agent:pi";
const NETBOX = "mu-netbox";
for (const { kind, available, start } of CONTAINER_ENGINES) {
  const sb = sandbox(`mt-ctrpi-${kind}`);
  let base = "";
  let engine: DockerEngine | undefined;
  let endpoint: NetnsEndpoint | undefined;
  const modelBodies = (from: number) => endpoint!.modelBodies(from);

  describe.skipIf(!available.ok && !process.env.CI)(
    `pi as a child in a container (${kind}; real CLI from muster image build, scripted endpoint)`,
    { timeout: 300_000 },
    () => {
      beforeAll(async () => {
        if (!available.ok) throw new Error(available.why);
        base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
        engine = await start(base);
        Object.assign(sb.env, engine.env);
        // npm's own cache (this machine's, where the pinned CLIs were installed from), not the sandbox's HOME.
        const built = await sb.json(["image", "build", "--tag", IMAGE, "--agent", "pi", "--offline"], {
          env: { npm_config_cache: path.join(os.homedir(), ".npm") },
          timeout: 600_000,
        });
        expect(built.exitCode, built.stderr).toBe(0);
        expect(built.data.agents).toEqual([expect.stringMatching(/^pi \d+\.\d+\.\d+$/)]);

        engine.docker([
          "run",
          "--detach",
          "--pull",
          "never",
          "--network",
          "none",
          "--init",
          "--name",
          NETBOX,
          IMAGE,
          "sleep",
          "infinity",
        ]);
        const pid = Number(engine.docker(["inspect", "--format", "{{.State.Pid}}", NETBOX]).trim());
        endpoint = await startEndpointIn(`/proc/${pid}/ns/net`);
        const url = endpoint.url;
        const cfg = path.join(base, "pi-home");
        const piEnv = prepareCli("pi", url, cfg) as Record<string, string>;
        writeProjectAgent(
          sb,
          "boxed-pi",
          [
            "runner: pi",
            "model: local:scripted",
            "env:",
            ...Object.entries(piEnv).map(([k, v]) => `  ${k}: "${v}"`),
            "container:",
            `  image: ${IMAGE}`,
            `  network: container:${NETBOX}`,
            `  mounts: ["${path.join(cfg, ".pi")}:/root/.pi:rw"]`,
          ],
          "pi in a box.",
        );
      }, 600_000);

      afterAll(async () => {
        const ls = await sb.json(["ls"]).catch(() => undefined);
        await sb.run(["cancel", "--all"]);
        for (const c of (ls?.data.children ?? []) as { place: string }[])
          if (c.place !== "local") await placeKeeperOf(sb.home, c.place).stop();
        await endpoint?.stop();
        await engine?.stop();
        expect(await sb.cleanup()).toEqual([]);
        if (base) fs.rmSync(base, { recursive: true, force: true });
      }, 90_000);

      it("spawn --agent boxed-pi completes with the scripted answer from inside its container; send resumes pi's session there", async () => {
        const first = await waitedJson(sb, ["spawn", "--agent", "boxed-pi", "say hi"], {});
        const r1 = first.data.results?.[0];
        expect(r1?.status, `${JSON.stringify(first.data)} ${first.stderr}`).toBe("completed");
        expect(r1.text.trim()).toMatch(/^scripted answer \d+$/);
        const id = first.data.spawned.id as string;
        const dir = r1.artifactDir as string;
        expect((await sb.json(["status", id])).data.place).toBe(`container:${id}`);
        // The request came over the netbox's loopback: from a container on its network namespace.
        expect(modelBodies(0).some((b) => b.includes("say hi"))).toBe(true);
        // pi is the image's, in the child's container.
        expect(engine!.docker(["exec", `muster-${id}`, "sh", "-c", "command -v pi"]).trim()).toBe(
          "/usr/local/bin/pi",
        );

        const before = endpoint!.requests.length;
        const second = await waitedJson(sb, ["send", id, "again"], {});
        const r2 = second.data.results?.[0];
        expect(r2?.status, `${JSON.stringify(second.data)} ${second.stderr}`).toBe("completed");
        expect(r2.text.trim()).not.toBe(r1.text.trim());
        // pi resumed its own session: turn 2's request carries turn 1, which muster did not send again.
        const sent = modelBodies(before).at(-1) ?? "";
        expect(sent).toContain("again");
        expect(sent).toContain("say hi");
        expect(sent).toContain(r1.text.trim());
        const done = readEvents(dir).filter((e) => e.type === "completion");
        expect(done).toHaveLength(2);
        expect(done[1]!.runnerSessionId).toBe(done[0]!.runnerSessionId);
        expect(done[0]!.usage.input).toBeGreaterThan(0);
        // pi's session file is in its mounted folder, written from inside the container.
        const sessions = path.join(base, "pi-home", ".pi", "agent", "sessions");
        const all = fs.readdirSync(sessions, { recursive: true }).map(String);
        expect(all.some((f) => f.endsWith(".jsonl"))).toBe(true);
      });
    },
  );
}
