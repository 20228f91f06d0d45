/**
 * Children whose Pod comes from a SandboxClaim of the agent-sandbox CRDs (`sandboxWarmPool`), against the
 * stand-in API server started with them (a warm pool `cold` of no replicas, `warm` of one) and one without
 * them: the claim made (checked by the stand-in against the CRD's schema), its Pod found from its Sandbox and
 * exec'd into as a bare Pod is, a warm Pod adopted, the claim deleted by rm, and a cluster without the CRDs
 * refused at spawn. No real cluster can run here. Root only (the stand-in finds a Pod's daemons via /proc).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMuster } from "../../src/index.js";
import { readEvents, sandbox, until, writeProjectAgent } from "../helpers/cli.js";
import { type K8sStandin, startK8sStandin } from "../helpers/k8s-standin.js";
import { stopPlacedChildren } from "../helpers/place-keeper.js";

const root = process.getuid?.() === 0;
const sb = sandbox("mt-ksb");
let base = "";
let api: K8sStandin | undefined;
let bare: K8sStandin | undefined;

const claimOf = (id: string) => `muster-${id}`;
const claimNamed = (name: string) => api!.sandboxClaims().find((c) => c.metadata.name === name);
const podNamed = (name: string) => api!.pods().find((p) => p.metadata.name === name);
const warmSandboxes = () =>
  api!.sandboxes().filter((s) => s.metadata.labels?.["agents.x-k8s.io/warm-pool-sandbox"] === "warm");

describe.skipIf(!root && !process.env.CI)(
  "children in Pods of SandboxClaims (the stand-in API server)",
  () => {
    beforeAll(async () => {
      if (!root) throw new Error("the Kubernetes stand-in needs root");
      // Short paths: a tmux socket in a Pod's folder must fit in a socket address.
      base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-k-"));
      fs.mkdirSync(path.join(base, "a"));
      fs.mkdirSync(path.join(base, "b"));
      api = await startK8sStandin(path.join(base, "a"), {
        agentSandbox: {
          // The template's container is not called `agent`: muster takes the Pod's own.
          templates: {
            agent: {
              containers: [
                {
                  name: "main",
                  image: "muster-agent:latest",
                  command: ["sleep", "infinity"],
                  stdin: true,
                  tty: true,
                },
              ],
            },
          },
          warmPools: { cold: { template: "agent", replicas: 0 }, warm: { template: "agent", replicas: 1 } },
        },
      });
      bare = await startK8sStandin(path.join(base, "b"));
      sb.env.KUBECONFIG = api.kubeconfig;
      await until(
        () => warmSandboxes().some((s) => podNamed(s.metadata.name)?.status.phase === "Running"),
        10_000,
      );
    }, 60_000);

    afterAll(async () => {
      await stopPlacedChildren(sb);
      await api?.stop();
      await bare?.stop();
      expect(await sb.cleanup()).toEqual([]);
      if (base) fs.rmSync(base, { recursive: true, force: true });
    }, 90_000);

    it("a cluster entry with --sandbox-warm-pool: the child's Pod is its claim's, a turn runs there and is mirrored; cancel suspends its Sandbox, a resume wakes it in a new Pod, rm deletes the claim", async () => {
      const add = await sb.json([
        ...["hosts", "add", "agents", "--k8s", "--context", "standin", "--sandbox-warm-pool", "cold"],
      ]);
      expect(add.exitCode, add.stderr).toBe(0);
      expect(add.data).toEqual({ name: "agents", k8s: { context: "standin", sandboxWarmPool: "cold" } });

      const spawned = await sb.json(["spawn", "--on", "agents", "mock: tools=1\nfirst task via a claim"]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const { id, artifactDir: dir } = spawned.data;
      const waited = await sb.json(["wait", id, "--timeout", "30s"]);
      expect(waited.exitCode, waited.stderr).toBe(0);
      expect(waited.data.results[0]).toMatchObject({ status: "completed" });

      // The claim muster made (the stand-in checked it against the CRD's schema), labelled as its Pods are.
      const claim = claimNamed(claimOf(id));
      expect(claim).toMatchObject({
        apiVersion: "extensions.agents.x-k8s.io/v1beta1",
        kind: "SandboxClaim",
        metadata: { labels: { "muster.dev/child": id, "app.kubernetes.io/managed-by": "muster" } },
        spec: { warmPoolRef: { name: "cold" } },
        status: { sandbox: { name: claimOf(id) } },
      });
      expect(claim!.status.conditions).toContainEqual(
        expect.objectContaining({ type: "Ready", status: "True" }),
      );
      // No warm Pod in pool `cold`: the controller made a Sandbox and Pod named as the claim; muster sent no Pod.
      expect(api!.manifests).toEqual([]);
      expect(podNamed(claimOf(id))?.status.phase).toBe("Running");
      // Every command went through the exec of that Pod, in the template's container.
      const execs = api!.requests.filter((r) => r.path.endsWith(`/pods/${claimOf(id)}/exec`));
      expect(execs.length).toBeGreaterThan(0);
      expect(execs.every((r) => r.query.container === "main")).toBe(true);
      expect((await sb.json(["status", id])).data).toMatchObject({
        place: `k8s:${id}`,
        cwd: api!.podDir(claimOf(id)),
      });
      const farDir = path.join(api!.podDir(claimOf(id)), ".local/state/muster", path.relative(sb.home, dir));
      expect(fs.readFileSync(path.join(farDir, "events.ndjson"), "utf8")).toBe(
        fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
      );

      // cancel suspends the claim's Sandbox: its Pod (and everything on its disk) goes, the claim and Sandbox stay.
      const firstPod = podNamed(claimOf(id))!.metadata.uid;
      expect((await sb.run(["cancel", id])).exitCode).toBe(0);
      const sandboxNamed = (name: string) => api!.sandboxes().find((s) => s.metadata.name === name);
      expect(sandboxNamed(claimOf(id))?.spec.operatingMode).toBe("Suspended");
      const patches = api!.requests.filter((r) => r.method === "PATCH");
      expect(patches.map((r) => r.path)).toEqual([
        `/apis/agents.x-k8s.io/v1beta1/namespaces/muster/sandboxes/${claimOf(id)}`,
      ]);
      await until(() => podNamed(claimOf(id)) === undefined, 15_000);
      expect(fs.existsSync(farDir)).toBe(false);
      expect(claimNamed(claimOf(id))?.status.conditions).toContainEqual(
        expect.objectContaining({ type: "Ready", status: "False", reason: "SandboxSuspended" }),
      );
      expect((await sb.json(["status", id])).data.live).toMatchObject({ state: "closed" });

      // A resume wakes it in a new Pod; the conversation and record come from this machine's copy.
      const resumed = await sb.json(["spawn", "--resume", id, "--wait", "mock: tools=1\nsecond task"]);
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      expect(resumed.data.results[0]).toMatchObject({ status: "completed" });
      expect(sandboxNamed(claimOf(id))?.spec.operatingMode).toBe("Running");
      expect(podNamed(claimOf(id))?.metadata.uid).not.toBe(firstPod);
      expect(readEvents(dir).filter((e) => e.type === "child_started")).toHaveLength(2);
      expect(readEvents(dir).filter((e) => e.type === "completion")).toHaveLength(2);
      expect((await sb.json(["result", id])).data).toMatchObject({ status: "completed" });
      expect(api!.sandboxClaims()).toHaveLength(1);

      // rm deletes the claim; its Sandbox and Pod go with it.
      expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
      expect(claimNamed(claimOf(id))).toBeUndefined();
      expect(
        api!.requests.some(
          (r) =>
            r.method === "DELETE" &&
            r.path ===
              `/apis/extensions.agents.x-k8s.io/v1beta1/namespaces/muster/sandboxclaims/${claimOf(id)}`,
        ),
      ).toBe(true);
      await until(() => podNamed(claimOf(id)) === undefined, 15_000);
      expect((await sb.json(["hosts", "rm", "agents"])).exitCode).toBe(0);
    }, 120_000);

    it("in one long-lived process (the library, as the MCP server and workflows run): a resume after a cancel wakes the suspended Sandbox and readies its new Pod again", async () => {
      writeProjectAgent(sb, "lib-mock", ["runner: mock", "k8s:", "  sandboxWarmPool: cold"]);
      const m = createMuster({ env: sb.env, cwd: sb.cwd });
      const { id } = await m.spawn({ agent: "lib-mock", prompt: "the first turn" });
      expect((await m.wait([id], { timeoutMs: 30_000 })).results[0]).toMatchObject({ status: "completed" });
      const firstPod = podNamed(claimOf(id))!.metadata.uid;
      await m.cancel(id);
      await until(() => podNamed(claimOf(id)) === undefined, 15_000);
      await m.resume(id, "the second turn");
      const second = await m.wait([id], { timeoutMs: 30_000 });
      expect(second.results[0]).toMatchObject({ status: "completed" });
      expect(podNamed(claimOf(id))?.metadata.uid).not.toBe(firstPod);
      expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
      expect(claimNamed(claimOf(id))).toBeUndefined();
    }, 90_000);

    it("a profile's sandboxWarmPool on a pool with a warm Pod: the claim adopts it, the child runs in the warm Pod", async () => {
      const [warm] = warmSandboxes();
      expect(warm).toBeDefined();
      const warmPod = warm!.metadata.name as string;
      expect(warmPod).toMatch(/^warm-[0-9a-f]{5}$/);
      writeProjectAgent(sb, "warm-mock", ["runner: mock", "k8s:", "  sandboxWarmPool: warm"]);
      const spawned = await sb.json(["spawn", "--agent", "warm-mock", "--wait", "a task in a warm Pod"]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const id = spawned.data.spawned.id as string;
      expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
      expect(claimNamed(claimOf(id))?.status.sandbox.name).toBe(warmPod);
      expect((await sb.json(["status", id])).data).toMatchObject({
        place: `k8s:${id}`,
        cwd: api!.podDir(warmPod),
      });
      expect(api!.requests.some((r) => r.path.endsWith(`/pods/${warmPod}/exec`))).toBe(true);
      // No Pod named as the claim: the warm one serves it; the pool made another warm one.
      expect(podNamed(claimOf(id))).toBeUndefined();
      expect(warmSandboxes().map((s) => s.metadata.name)).not.toContain(warmPod);
      await until(() => warmSandboxes().length === 1, 10_000);

      expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
      expect(claimNamed(claimOf(id))).toBeUndefined();
      await until(() => podNamed(warmPod) === undefined, 15_000);
    }, 90_000);

    it("a claim's watch dropped while its Pod starts is resumed from its resourceVersion; the spawn goes on", async () => {
      // The claim's Pod takes 3 s to run; the spawn's watch on the claim is dropped twice meanwhile.
      api!.setStartDelay(3_000);
      const claimWatches = () =>
        api!.requests.filter((r) => r.path.endsWith("/sandboxclaims") && r.query.watch !== undefined);
      const before = claimWatches().length;
      writeProjectAgent(sb, "cold-mock", ["runner: mock", "k8s:", "  sandboxWarmPool: cold"]);
      let id = "";
      try {
        const spawning = sb.json(["spawn", "--agent", "cold-mock", "--wait", "through dropped watches"]);
        for (let i = 0; i < 2; i++) {
          await until(() => api!.watching() > 0 && claimWatches().length > before + i, 10_000);
          api!.dropWatches();
        }
        const spawned = await spawning;
        expect(spawned.exitCode, spawned.stderr).toBe(0);
        expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
        id = spawned.data.spawned.id as string;
      } finally {
        api!.setStartDelay(10);
      }
      const watches = claimWatches().slice(before);
      expect(watches.length).toBeGreaterThanOrEqual(3);
      expect(watches.every((w) => w.query.fieldSelector === `metadata.name=${claimOf(id)}`)).toBe(true);
      expect(watches.slice(1).every((w) => typeof w.query.resourceVersion === "string")).toBe(true);
      expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
      expect(claimNamed(claimOf(id))).toBeUndefined();
    }, 60_000);

    it("refuses in one line, leaving nothing: a warm pool on a cluster without the CRDs, a warm pool the cluster does not have", async () => {
      writeProjectAgent(sb, "pool-mock", ["runner: mock", "k8s:", "  sandboxWarmPool: cold"]);
      const childrenBefore = (await sb.json(["ls"])).data.children.length;
      const noCrds = await sb.run(["spawn", "--agent", "pool-mock", "refused"], {
        env: { KUBECONFIG: bare!.kubeconfig },
      });
      expect(noCrds.exitCode).not.toBe(0);
      expect(noCrds.stderr.trim().split("\n")).toHaveLength(1);
      expect(noCrds.stderr).toMatch(
        /sandbox warm pool cold: cluster standin does not serve SandboxClaims \(extensions\.agents\.x-k8s\.io\/v1beta1\)/,
      );
      // It asked the discovery document only: nothing was made there.
      expect(bare!.requests.filter((r) => r.method !== "GET")).toEqual([]);
      expect(bare!.requests.map((r) => r.path)).toContain("/apis/extensions.agents.x-k8s.io/v1beta1");
      expect(bare!.pods()).toEqual([]);
      expect((await sb.json(["ls"])).data.children).toHaveLength(childrenBefore);

      writeProjectAgent(sb, "nopool-mock", ["runner: mock", "k8s:", "  sandboxWarmPool: nowhere"]);
      const podsBefore = api!.pods().length;
      const noPool = await sb.run(["spawn", "--agent", "nopool-mock", "--wait", "refused"]);
      expect(noPool.exitCode).not.toBe(0);
      expect(noPool.stderr.trim().split("\n")).toHaveLength(1);
      expect(noPool.stderr).toMatch(
        /sandbox claim muster-\S+ \(warm pool nowhere\): WarmPoolNotFound: SandboxWarmPool "nowhere" not found/,
      );
      // The claim the controller could not serve was deleted; the refused child is not kept.
      expect((await sb.json(["ls"])).data.children).toHaveLength(childrenBefore);
      expect(api!.sandboxClaims()).toEqual([]);
      expect(api!.pods()).toHaveLength(podsBefore);
    }, 60_000);
  },
);
