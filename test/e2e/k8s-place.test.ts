/**
 * Children in Kubernetes Pods (place `k8s:<id>`, `spawn --on k8s[:<context>]`) against the stand-in API
 * server (test/helpers/k8s-standin.ts; no real cluster can run here): muster's own client calls (create,
 * watch, get, delete; exec over WebSocket for every command and for the mirror's link), each Pod's processes
 * real ones in a folder of their own, every Pod muster sends checked against the Kubernetes OpenAPI schema
 * by the stand-in. Root only (the stand-in finds a Pod's daemons through /proc).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, sandbox, until, writeProjectAgent } from "../helpers/cli.js";
import { attachAndDetach } from "../helpers/far-views.js";
import { makeRepo } from "../helpers/git-repo.js";
import { type K8sStandin, startK8sStandin } from "../helpers/k8s-standin.js";
import { stopPlacedChildren } from "../helpers/place-keeper.js";

const root = process.getuid?.() === 0;
const sb = sandbox("mt-k8s");
let base = "";
let api: K8sStandin | undefined;

const podOf = (id: string) => `muster-${id}`;
/** Where a child's artifact dir is inside its Pod (its HOME is the Pod's folder). */
const farDir = (id: string, dir: string) =>
  path.join(api!.podDir(podOf(id)), ".local/state/muster", path.relative(sb.home, dir));
const phaseOf = (id: string) => api!.pods().find((p) => p.metadata.name === podOf(id))?.status.phase;

describe.skipIf(!root && !process.env.CI)("children in Kubernetes Pods (the stand-in API server)", () => {
  beforeAll(async () => {
    if (!root) throw new Error("the Kubernetes stand-in needs root");
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-k8s-"));
    api = await startK8sStandin(base);
    sb.env.KUBECONFIG = api.kubeconfig;
  }, 60_000);

  afterAll(async () => {
    await stopPlacedChildren(sb);
    await api?.stop();
    expect(await sb.cleanup()).toEqual([]);
    if (base) fs.rmSync(base, { recursive: true, force: true });
  }, 90_000);

  it("spawn --on k8s makes a Pod for the child and runs it there: wait, send, capture, the record mirrored", async () => {
    const spawned = await sb.json(["spawn", "--on", "k8s", "mock: tools=1\nfirst task in a Pod"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const { id, artifactDir: dir } = spawned.data;
    const waited = await sb.json(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(waited.data.results[0]).toMatchObject({ status: "completed" });
    // It works in the Pod's home: this machine's working directory is not in a Pod.
    expect((await sb.json(["status", id])).data).toMatchObject({
      status: "idle",
      place: `k8s:${id}`,
      cwd: api!.podDir(podOf(id)),
    });
    // The Pod muster asked for (the stand-in checked it against the Pod schema before it made it).
    const manifest = api!.manifests.find((m) => (m.metadata as { name: string }).name === podOf(id));
    expect(manifest).toMatchObject({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { labels: { "muster.dev/child": id, "app.kubernetes.io/managed-by": "muster" } },
      spec: {
        restartPolicy: "Never",
        containers: [{ name: "agent", command: ["sleep", "infinity"], stdin: true, tty: true }],
      },
    });
    expect(phaseOf(id)).toBe("Running");
    // Every command went through the API: the exec subresource, as the Pod's own processes.
    expect(api!.requests.some((r) => r.path.endsWith(`/pods/${podOf(id)}/exec`))).toBe(true);
    // The far log is in the Pod's folder; the mirror here is a copy of it, byte for byte.
    expect(fs.readFileSync(path.join(farDir(id, dir), "events.ndjson"), "utf8")).toBe(
      fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
    );
    const sent = await sb.json(["send", id, "--wait", "second task"]);
    expect(sent.data.results[0]).toMatchObject({ status: "completed" });
    const captured = await sb.run(["capture", id]);
    expect(captured.exitCode, captured.stderr).toBe(0);
    expect(captured.stdout).toContain("second task");
    // attach is the API's exec with a TTY: tmux attach in the Pod, on a real terminal here.
    expect(await attachAndDetach(sb, id, "second task")).toBe(0);
    // cancel stops the host and keeps the Pod; a resume continues in it.
    expect((await sb.run(["cancel", id])).exitCode).toBe(0);
    expect(phaseOf(id)).toBe("Running");
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "third task"]);
    expect(resumed.data.results[0]).toMatchObject({ status: "completed" });
    expect(readEvents(dir).filter((e) => e.type === "child_started")).toHaveLength(2);
    // rm deletes the Pod.
    expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
    await until(() => phaseOf(id) === undefined, 15_000);
  }, 120_000);

  it("a Pod evicted mid-turn, or deleted: the child settles lost with the reason", async () => {
    for (const how of ["evict", "delete"] as const) {
      const spawned = await sb.json(["spawn", "--on", "k8s", `mock: hang\n${how} me`]);
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      const { id, artifactDir: dir } = spawned.data;
      await until(() => readEvents(dir).some((e) => e.type === "runner_started"), 20_000);
      if (how === "evict") await api!.evict(podOf(id));
      else {
        const r = await fetch(`${api!.url}/api/v1/namespaces/muster/pods/${podOf(id)}?gracePeriodSeconds=0`, {
          method: "DELETE",
          headers: { Authorization: "Bearer admin-token" },
        });
        expect(r.status).toBe(200);
      }
      const waited = await sb.json(["wait", id, "--timeout", "40s"]);
      expect(waited.data.results[0]).toMatchObject({ id, status: "lost" });
      expect(waited.data.results[0].reason).toMatch(
        how === "evict"
          ? /its Pod muster-\S+ is Failed \(Evicted: The node was low on resource/
          : /its Pod muster-\S+ is gone/,
      );
      expect(readEvents(dir).filter((e) => e.type === "child_exited")).toHaveLength(1);
    }
  }, 120_000);

  it("a watch dropped while the Pod starts is resumed from its resourceVersion; the spawn goes on", async () => {
    // The Pod takes 3 s to run; its spawn's watch is dropped twice meanwhile.
    api!.setStartDelay(3_000);
    const watchesBefore = api!.requests.filter((r) => r.query.watch !== undefined).length;
    try {
      const spawning = sb.json(["spawn", "--on", "k8s", "--wait", "through dropped watches"]);
      for (let i = 0; i < 2; i++) {
        await until(() => api!.watching() > 0, 10_000);
        api!.dropWatches();
      }
      const spawned = await spawning;
      expect(spawned.exitCode, spawned.stderr).toBe(0);
      expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
    } finally {
      api!.setStartDelay(10);
    }
    const watches = api!.requests.filter((r) => r.query.watch !== undefined).slice(watchesBefore);
    expect(watches.length).toBeGreaterThanOrEqual(3);
    // The resumed watches asked from where the dropped one had got to.
    expect(watches.slice(1).every((w) => typeof w.query.resourceVersion === "string")).toBe(true);
  }, 60_000);

  it("--isolation worktree in a Pod: HEAD goes in as a bundle over the exec stream, the work comes back to merge", async () => {
    const { dir: repo } = makeRepo(path.join(sb.cwd, "repo"), "here\n");
    const spawned = await sb.run([
      ...[
        "spawn",
        "--on",
        "k8s",
        "--isolation",
        "worktree",
        "--cwd",
        repo,
        "--name",
        "pod-wt",
        "--agent",
        "command",
      ],
      ...["--wait", "work", "--", "sh", "-c", "echo from-a-pod > pod.txt && pwd"],
    ]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = (await sb.json(["status", "pod-wt"])).data.id as string;
    // It worked in a clone inside the Pod's folder; the checkout here was never touched.
    expect(spawned.stdout).toContain(path.join(api!.podDir(podOf(id)), ".local/state/muster/worktrees", id));
    expect(fs.existsSync(path.join(repo, "pod.txt"))).toBe(false);
    const merged = await sb.json(["merge", id]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(fs.readFileSync(path.join(repo, "pod.txt"), "utf8")).toBe("from-a-pod\n");
  }, 90_000);

  it("a profile's k8s: its children go to Pods with its resources and service account", async () => {
    writeProjectAgent(sb, "pod-mock", [
      "runner: mock",
      "k8s:",
      "  cpu: 500m",
      "  memory: 256Mi",
      "  serviceAccount: agent",
    ]);
    const spawned = await sb.json(["spawn", "--agent", "pod-mock", "--wait", "from a profile"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.spawned.id as string;
    expect((await sb.json(["status", id])).data.place).toBe(`k8s:${id}`);
    const manifest = api!.manifests.find((m) => (m.metadata as { name: string }).name === podOf(id));
    expect(manifest).toMatchObject({
      spec: {
        serviceAccountName: "agent",
        automountServiceAccountToken: true,
        containers: [
          {
            resources: {
              requests: { cpu: "500m", memory: "256Mi" },
              limits: { cpu: "500m", memory: "256Mi" },
            },
          },
        ],
      },
    });
  }, 60_000);

  it("a cluster named with hosts add --k8s: --on <name> puts the child in a Pod there with the entry's fields over its profile's", async () => {
    const add = await sb.json([
      ...["hosts", "add", "lab", "--k8s", "--context", "standin", "--namespace", "muster"],
      ...["--image", "muster-agent:lab", "--memory", "128Mi", "--env", "LAB_VAR"],
    ]);
    expect(add.exitCode, add.stderr).toBe(0);
    const entry = {
      name: "lab",
      k8s: {
        context: "standin",
        namespace: "muster",
        image: "muster-agent:lab",
        memory: "128Mi",
        env: ["LAB_VAR"],
      },
    };
    expect(add.data).toEqual(entry);
    expect((await sb.json(["hosts", "ls"])).data.clusters).toEqual([entry]);
    expect((await sb.run(["hosts", "ls"])).stdout).toContain(
      "lab\tk8s, context standin, namespace muster, image muster-agent:lab, memory 128Mi, env LAB_VAR",
    );
    const check = await sb.json(["hosts", "check", "lab"]);
    expect(check.exitCode, check.stdout).toBe(0);
    expect(check.data).toMatchObject({
      reachable: true,
      context: "standin",
      namespace: "muster",
      problems: [],
    });

    // The profile asks for its CPU; the entry's memory wins over the profile's, and its variable is added.
    writeProjectAgent(sb, "lab-mock", ["runner: mock", "k8s:", "  cpu: 250m", "  memory: 512Mi"]);
    const spawned = await sb.json(
      ["spawn", "--agent", "lab-mock", "--on", "lab", "--wait", "a task on a named cluster"],
      { env: { LAB_VAR: "from-here" } },
    );
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.spawned.id as string;
    expect(spawned.data.results[0]).toMatchObject({ status: "completed" });
    expect((await sb.json(["status", id])).data.place).toBe(`k8s:${id}`);
    const manifest = api!.manifests.find((m) => (m.metadata as { name: string }).name === podOf(id));
    expect(manifest).toMatchObject({
      metadata: { namespace: "muster" },
      spec: {
        containers: [
          {
            image: "muster-agent:lab",
            resources: {
              requests: { cpu: "250m", memory: "128Mi" },
              limits: { cpu: "250m", memory: "128Mi" },
            },
          },
        ],
      },
    });

    // Refused in one line, nothing saved: flags of the other kind, a reserved name, a bad quantity.
    const refusals: [string[], RegExp][] = [
      [["hosts", "add", "x", "user@h", "--namespace", "n"], /--namespace goes with --k8s/],
      [["hosts", "add", "x", "--k8s", "user@h"], /--k8s takes no destination/],
      [["hosts", "add", "x", "--k8s", "--workdir", "/w"], /--workdir is for SSH hosts, not with --k8s/],
      [["hosts", "add", "k8s", "--k8s"], /not "any", "local" or "k8s"/],
      [["hosts", "add", "x", "--k8s", "--cpu", "lots"], /k8s cpu "lots" is not a CPU quantity/],
      [["hosts", "add", "x"], /give an ssh destination .*, or --k8s/],
    ];
    for (const [args, said] of refusals) {
      const r = await sb.run(args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(said);
    }
    expect((await sb.json(["hosts", "ls"])).data.clusters).toEqual([entry]);
    expect((await sb.json(["hosts", "rm", "lab"])).exitCode).toBe(0);
    expect((await sb.json(["hosts", "ls"])).data.clusters).toEqual([]);
  }, 90_000);

  it("refuses in one line, leaving no Pod: a denied create (RBAC), a context the kubeconfig does not have", async () => {
    const before = api!.pods().length;
    const denied = await sb.run(["spawn", "--on", "k8s:standin-viewer", "refused"]);
    expect(denied.exitCode).not.toBe(0);
    expect(denied.stderr.trim().split("\n")).toHaveLength(1);
    expect(denied.stderr).toMatch(
      /could not make the child's Pod: pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "muster"/,
    );
    const unknown = await sb.run(["spawn", "--on", "k8s:nowhere", "refused"]);
    expect(unknown.exitCode).not.toBe(0);
    expect(unknown.stderr).toMatch(
      /no Kubernetes context "nowhere" in the kubeconfig \(contexts: standin, standin-viewer\)/,
    );
    expect(api!.pods()).toHaveLength(before);
  });
});
