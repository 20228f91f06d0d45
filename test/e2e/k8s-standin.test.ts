/**
 * The stand-in Kubernetes API server (test/fixtures/k8s-standin.mjs), driven by the official client
 * @kubernetes/client-node as muster's Kubernetes place will drive a real one: Pods created, watched, read,
 * listed, deleted and evicted, commands exec'd over the WebSocket channel protocol (stdin, stdout, stderr, a
 * tty, the exit status), Status errors (401, 403, 404, 409, 422), and stop() leaving no process behind.
 */
import * as fs from "node:fs";
import type * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { PassThrough } from "node:stream";
import * as k8s from "@kubernetes/client-node";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { pidAlive, until } from "../helpers/cli.js";
import { type K8sStandin, startK8sStandin } from "../helpers/k8s-standin.js";

const NS = "muster";
const running: { standin: K8sStandin; base: string }[] = [];

afterEach(async () => {
  for (const { standin, base } of running.splice(0)) {
    await standin.stop();
    fs.rmSync(base, { recursive: true, force: true });
  }
});

/** A stand-in and the official client on its kubeconfig (context `standin`, or `standin-viewer`). */
async function start() {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-k8s-"));
  const standin = await startK8sStandin(base);
  running.push({ standin, base });
  return { standin, base, ...client(standin) };
}

function client(standin: K8sStandin, context = "standin") {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(standin.kubeconfig);
  kc.setCurrentContext(context);
  return { kc, api: kc.makeApiClient(k8s.CoreV1Api), exec: new k8s.Exec(kc), watcher: new k8s.Watch(kc) };
}

const podBody = (name: string, labels: Record<string, string> = {}): k8s.V1Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: { containers: [{ name: "main", image: "muster-child:1" }] },
});

/** Creates a pod and waits (on the API) until it runs. */
async function runningPod(api: k8s.CoreV1Api, name: string, labels: Record<string, string> = {}) {
  await api.createNamespacedPod({ namespace: NS, body: podBody(name, labels) });
  await until(async () => (await api.readNamespacedPod({ name, namespace: NS })).status?.phase === "Running");
}

type WatchEvent = { type: string; name: string; phase: string; rv: number };

/** A watch of the namespace's pods that keeps its events; `ended` resolves when the server ends it. */
async function watchPods(watcher: k8s.Watch, query: Record<string, string> = {}) {
  const events: WatchEvent[] = [];
  let end!: (err: unknown) => void;
  const ended = new Promise<unknown>((r) => {
    end = r;
  });
  const controller = await watcher.watch(
    `/api/v1/namespaces/${NS}/pods`,
    query,
    (type, obj: k8s.V1Pod) =>
      events.push({
        type,
        name: obj.metadata?.name ?? "",
        phase: obj.status?.phase ?? "",
        rv: Number(obj.metadata?.resourceVersion),
      }),
    (err) => end(err),
  );
  return { events, ended, abort: () => controller.abort() };
}

/** Runs argv in the pod through the exec subresource; resolves with its output and final V1Status. */
function run(
  exec: k8s.Exec,
  pod: string,
  argv: string[],
  opts: { stdin?: string; tty?: boolean; size?: { columns: number; rows: number } } = {},
): { result: Promise<{ stdout: string; stderr: string; status: k8s.V1Status }>; socket: Promise<WebSocket> } {
  // With a size, stdout looks like a terminal to the client, which then sends its size on channel 4.
  const stdout = Object.assign(new PassThrough(), opts.size ?? {});
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (d) => {
    out += d;
  });
  stderr.on("data", (d) => {
    err += d;
  });
  const stdin = opts.stdin === undefined ? null : new PassThrough();
  let statusOf!: (s: k8s.V1Status) => void;
  const status = new Promise<k8s.V1Status>((r) => {
    statusOf = r;
  });
  const socket = exec.exec(
    NS,
    pod,
    "main",
    argv,
    stdout,
    opts.tty ? null : stderr,
    stdin,
    !!opts.tty,
    statusOf,
  );
  if (stdin) void socket.then(() => stdin.end(opts.stdin));
  const result = socket.then(async () => ({ status: await status, stdout: out, stderr: err }));
  // A refused exec is awaited through `socket`; its result is then never awaited.
  result.catch(() => {});
  return { socket: socket as Promise<WebSocket>, result };
}

/** Live processes whose cwd or environment names `dir` (what a pod's processes have). */
function processesUnder(dir: string): { pid: number; cmdline: string }[] {
  const found = [];
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d) || Number(d) === process.pid) continue;
    try {
      const cwd = fs.readlinkSync(`/proc/${d}/cwd`);
      const env = fs.readFileSync(`/proc/${d}/environ`, "utf8");
      if ((cwd.startsWith(dir) || env.includes(dir)) && pidAlive(Number(d)))
        found.push({
          pid: Number(d),
          cmdline: fs.readFileSync(`/proc/${d}/cmdline`, "utf8").replaceAll("\0", " "),
        });
    } catch {}
  }
  return found;
}

/** The pid of `sleep <arg>` running in a pod's folder. */
const sleepIn = (dir: string, arg: string) =>
  processesUnder(dir).find((p) => p.cmdline.trim() === `sleep ${arg}`)?.pid;

/** The Status body of a refused API call. */
async function refusal(call: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await call;
  } catch (e) {
    const ex = e as k8s.ApiException<string>;
    return { code: ex.code, body: typeof ex.body === "string" ? JSON.parse(ex.body) : ex.body };
  }
  throw new Error("the call succeeded");
}

/** What the server answers an exec upgrade it refuses (status and Status body), with the given token. */
function refusedUpgrade(url: string, token: string, protocols = ["v5.channel.k8s.io"]) {
  return new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, "ws"), protocols, {
      headers: { Authorization: `Bearer ${token}` },
    });
    ws.on("open", () => reject(new Error("upgraded")));
    ws.on("unexpected-response", (_req: http.ClientRequest, res: http.IncomingMessage) => {
      let text = "";
      res.on("data", (d: Buffer) => {
        text += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    ws.on("error", () => {});
  });
}

describe("a stand-in Kubernetes API server, driven by @kubernetes/client-node", () => {
  it("creates a pod the watch sees go Pending → Running, reads it and lists it by label and by name", async () => {
    const { standin, api, watcher } = await start();
    const w = await watchPods(watcher);
    const made = await api.createNamespacedPod({
      namespace: NS,
      body: podBody("alpha", { app: "mu", n: "1" }),
    });
    expect(made.status?.phase).toBe("Pending");
    expect(made.metadata).toMatchObject({ name: "alpha", namespace: NS, labels: { app: "mu", n: "1" } });
    expect(made.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(fs.statSync(standin.podDir("alpha")).isDirectory()).toBe(true);

    await until(() => w.events.some((e) => e.name === "alpha" && e.phase === "Running"));
    const mine = w.events.filter((e) => e.name === "alpha");
    expect(mine[0]).toMatchObject({ type: "ADDED", phase: "Pending" });
    expect(mine.slice(1).every((e) => e.type === "MODIFIED")).toBe(true);
    // Every change has its own, increasing resourceVersion.
    expect(mine.map((e) => e.rv)).toEqual([...mine.map((e) => e.rv)].sort((a, b) => a - b));
    expect(new Set(mine.map((e) => e.rv)).size).toBe(mine.length);

    const got = await api.readNamespacedPod({ name: "alpha", namespace: NS });
    expect(got.status?.phase).toBe("Running");
    expect(got.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
    expect(got.status?.containerStatuses?.[0]).toMatchObject({
      name: "main",
      ready: true,
      image: "muster-child:1",
      imageID: "",
      restartCount: 0,
    });
    expect(got.status?.containerStatuses?.[0]?.state?.running?.startedAt).toBeInstanceOf(Date);
    expect(got.metadata?.resourceVersion).toBe(String(mine.at(-1)?.rv));

    await runningPod(api, "beta", { app: "mu", n: "2" });
    await api.createNamespacedPod({ namespace: NS, body: podBody("gamma", { app: "other" }) });
    const byLabel = await api.listNamespacedPod({ namespace: NS, labelSelector: "app=mu" });
    expect(byLabel.kind).toBe("PodList");
    expect(byLabel.items.map((p) => p.metadata?.name)).toEqual(["alpha", "beta"]);
    expect(Number(byLabel.metadata?.resourceVersion)).toBeGreaterThanOrEqual(
      Number(got.metadata?.resourceVersion),
    );
    const both = await api.listNamespacedPod({ namespace: NS, labelSelector: "app=mu,n=2" });
    expect(both.items.map((p) => p.metadata?.name)).toEqual(["beta"]);
    const byName = await api.listNamespacedPod({ namespace: NS, fieldSelector: "metadata.name=gamma" });
    expect(byName.items.map((p) => p.metadata?.name)).toEqual(["gamma"]);
    expect((await api.listNamespacedPod({ namespace: NS })).items).toHaveLength(3);
    expect(standin.manifests).toHaveLength(3);
    expect(standin.requests.some((r) => r.method === "POST" && r.user === "admin")).toBe(true);

    const missing = await refusal(api.readNamespacedPod({ name: "nope", namespace: NS }));
    expect(missing).toEqual({
      code: 404,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message: 'pods "nope" not found',
        reason: "NotFound",
        details: { name: "nope", kind: "pods" },
        code: 404,
      },
    });
    w.abort();
  });

  it("exec: stdout, stderr and a non-zero exit code; stdin then its end (v5); a tty", async () => {
    const { api, exec, standin } = await start();
    await runningPod(api, "ex");

    const failed = await run(exec, "ex", ["sh", "-c", "echo out; echo err >&2; exit 3"]).result;
    expect(failed.stdout).toBe("out\n");
    expect(failed.stderr).toBe("err\n");
    expect(failed.status).toEqual({
      metadata: {},
      status: "Failure",
      message:
        "command terminated with non-zero exit code: error executing command [sh -c echo out; echo err >&2; exit 3], exit code 3",
      reason: "NonZeroExitCode",
      details: { causes: [{ reason: "ExitCode", message: "3" }] },
    });

    const cat = run(exec, "ex", ["cat"], { stdin: "hello\nworld\n" });
    expect((await cat.socket).protocol).toBe("v5.channel.k8s.io");
    // cat ends only because the end of stdin reached it.
    expect(await cat.result).toEqual({
      stdout: "hello\nworld\n",
      stderr: "",
      status: { metadata: {}, status: "Success" },
    });

    const tty = await run(exec, "ex", ["sh", "-c", 'tty -s && echo tty; echo "$TERM"'], { tty: true }).result;
    expect(tty.status.status).toBe("Success");
    expect(tty.stdout).toBe("tty\r\nxterm-256color\r\n");
    // The terminal's size, as the client sends it (channel 4), applied before the line on stdin arrives.
    const sized = await run(exec, "ex", ["sh", "-c", "read line; stty size"], {
      tty: true,
      stdin: "go\n",
      size: { columns: 123, rows: 45 },
    }).result;
    expect(sized.stdout).toBe("go\r\n45 123\r\n");
    const notty = await run(exec, "ex", [
      "sh",
      "-c",
      'tty -s || echo "no tty"; test -n "$TERM" || echo "no TERM"',
    ]).result;
    expect(notty.stdout).toBe("no tty\nno TERM\n");

    const absent = await run(exec, "ex", ["no-such-command"]).result;
    expect(absent.status).toMatchObject({ status: "Failure", reason: "InternalError", code: 500 });
    expect(absent.status.message).toContain('exec: "no-such-command": executable file not found in $PATH');

    // A v4-only client still gets a channel (no stdin close there); a client without one is refused.
    const path = `/api/v1/namespaces/${NS}/pods/ex/exec?command=true&stdout=true`;
    const v4 = new WebSocket(`${standin.url.replace("http", "ws")}${path}`, ["v4.channel.k8s.io"], {
      headers: { Authorization: "Bearer admin-token" },
    });
    const v4status = await new Promise<string>((resolve) =>
      v4.on("message", (d: Buffer) => {
        if (d[0] === 3) resolve(d.subarray(1).toString());
      }),
    );
    expect(v4.protocol).toBe("v4.channel.k8s.io");
    expect(JSON.parse(v4status)).toEqual({ metadata: {}, status: "Success" });
    const none = await refusedUpgrade(`${standin.url}${path}`, "admin-token", ["channel.k8s.io"]);
    expect(none.status).toBe(400);
  });

  it("an exec'd process's HOME is the pod's folder, not the machine's", async () => {
    const { api, exec, standin } = await start();
    await runningPod(api, "home");
    const marker = `marker-${process.pid}-${Date.now()}`;
    const r = await run(exec, "home", ["sh", "-c", `echo here > "$HOME/${marker}"; pwd; echo "$TMUX_TMPDIR"`])
      .result;
    expect(r.status.status).toBe("Success");
    const dir = standin.podDir("home");
    expect(r.stdout).toBe(`${dir}\n${dir}\n`);
    expect(fs.readFileSync(path.join(dir, marker), "utf8")).toBe("here\n");
    expect(fs.existsSync(path.join(os.homedir(), marker))).toBe(false);
    expect(fs.existsSync(path.join("/root", marker))).toBe(false);
  });

  it("refuses an invalid manifest (422, nothing created) and a duplicate name (409)", async () => {
    const { api, standin } = await start();
    const bad = {
      ...podBody("bad"),
      spec: { containers: [{ name: "main", image: 3 }] },
    } as unknown as k8s.V1Pod;
    const invalid = await refusal(api.createNamespacedPod({ namespace: NS, body: bad }));
    expect(invalid.code).toBe(422);
    expect(invalid.body).toMatchObject({ kind: "Status", status: "Failure", reason: "Invalid", code: 422 });
    expect(invalid.body.message).toBe(
      'Pod "bad" is invalid: spec.containers[0].image: Invalid value: 3: must be string',
    );
    expect(standin.pods()).toEqual([]);
    expect((await api.listNamespacedPod({ namespace: NS })).items).toEqual([]);
    expect(fs.existsSync(standin.podDir("bad"))).toBe(false);
    expect(standin.manifests).toEqual([
      { ...podBody("bad"), spec: { containers: [{ name: "main", image: 3 }] } },
    ]);

    await api.createNamespacedPod({ namespace: NS, body: podBody("dup") });
    const dup = await refusal(api.createNamespacedPod({ namespace: NS, body: podBody("dup") }));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({
      reason: "AlreadyExists",
      message: 'pods "dup" already exists',
      code: 409,
    });
    expect(standin.pods().map((p) => p.metadata.name)).toEqual(["dup"]);
  });

  it("the viewer may read but not create (403) or exec (403); no token is 401", async () => {
    const { api, standin } = await start();
    await runningPod(api, "seen");
    const viewer = client(standin, "standin-viewer");
    expect((await viewer.api.listNamespacedPod({ namespace: NS })).items).toHaveLength(1);

    const create = await refusal(viewer.api.createNamespacedPod({ namespace: NS, body: podBody("nope") }));
    expect(create).toEqual({
      code: 403,
      body: {
        kind: "Status",
        apiVersion: "v1",
        metadata: {},
        status: "Failure",
        message:
          'pods is forbidden: User "viewer" cannot create resource "pods" in API group "" in the namespace "muster"',
        reason: "Forbidden",
        details: { kind: "pods" },
        code: 403,
      },
    });
    const del = await refusal(viewer.api.deleteNamespacedPod({ name: "seen", namespace: NS }));
    expect(del.code).toBe(403);
    expect(del.body.message).toContain('User "viewer" cannot delete resource "pods"');

    await expect(run(viewer.exec, "seen", ["true"]).socket).rejects.toMatchObject({
      message: expect.stringContaining("403"),
    });
    const execPath = `${standin.url}/api/v1/namespaces/${NS}/pods/seen/exec?command=true&stdout=true`;
    const refused = await refusedUpgrade(execPath, "viewer-token");
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(
      'pods "seen" is forbidden: User "viewer" cannot create resource "pods/exec" in API group "" in the namespace "muster"',
    );
    expect((await refusedUpgrade(execPath, "wrong-token")).status).toBe(401);
    const anonymous = await fetch(`${standin.url}/api/v1/namespaces/${NS}/pods`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      message: "Unauthorized",
      reason: "Unauthorized",
      code: 401,
    });
    expect(standin.pods().map((p) => p.metadata.name)).toEqual(["seen"]);
    expect(standin.requests.filter((r) => r.user === "viewer").map((r) => r.method)).toContain("POST");
  });

  it("evict: the pod's processes die, it stays as Failed/Evicted, and exec is refused", async () => {
    const { api, exec, standin } = await start();
    await runningPod(api, "ev");
    const sleeper = run(exec, "ev", ["sleep", "1000"]);
    await sleeper.socket;
    const pid = (await until(() => sleepIn(standin.podDir("ev"), "1000"))) as number;

    await standin.evict("ev");
    expect(pidAlive(pid)).toBe(false);
    const got = await api.readNamespacedPod({ name: "ev", namespace: NS });
    expect(got.status).toMatchObject({
      phase: "Failed",
      reason: "Evicted",
      message: "The node was low on resource: memory.",
    });
    // The exec session saw its command killed (SIGKILL: 128 + 9).
    expect((await sleeper.result).status.details?.causes?.[0]?.message).toBe("137");

    await expect(run(exec, "ev", ["true"]).socket).rejects.toMatchObject({
      message: expect.stringContaining("400"),
    });
    const refused = await refusedUpgrade(
      `${standin.url}/api/v1/namespaces/${NS}/pods/ev/exec?command=true&stdout=true`,
      "admin-token",
    );
    expect(refused).toMatchObject({ status: 400, body: { kind: "Status", reason: "BadRequest", code: 400 } });
    expect(standin.pods().map((p) => p.status.phase)).toEqual(["Failed"]);
  });

  it("the Eviction API (policy/v1) deletes the pod gracefully, as a real API server does", async () => {
    const { api, exec, standin } = await start();
    await runningPod(api, "evapi");
    const sleeper = run(exec, "evapi", ["sleep", "1005"]);
    await sleeper.socket;
    const pid = (await until(() => sleepIn(standin.podDir("evapi"), "1005"))) as number;
    const eviction: k8s.V1Eviction = {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "evapi", namespace: NS },
      deleteOptions: { gracePeriodSeconds: 1 },
    };
    const viewer = client(standin, "standin-viewer");
    const refused = await refusal(
      viewer.api.createNamespacedPodEviction({ name: "evapi", namespace: NS, body: eviction }),
    );
    expect(refused.code).toBe(403);
    expect(refused.body.message).toContain('cannot create resource "pods/eviction"');

    await api.createNamespacedPodEviction({ name: "evapi", namespace: NS, body: eviction });
    // Polls until the read fails: it must fail with 404.
    const gone = await refusal(
      until(async () => !(await api.readNamespacedPod({ name: "evapi", namespace: NS }))),
    );
    expect(gone.code).toBe(404);
    expect(pidAlive(pid)).toBe(false);
    expect((await sleeper.result).status.details?.causes?.[0]?.message).toBe("143");
  });

  it("delete: processes gone, a DELETED event, then 404", async () => {
    const { api, exec, standin, watcher } = await start();
    await runningPod(api, "del");
    const w = await watchPods(watcher, { fieldSelector: "metadata.name=del" });
    const sleeper = run(exec, "del", ["sleep", "1001"]);
    await sleeper.socket;
    const pid = (await until(() => sleepIn(standin.podDir("del"), "1001"))) as number;

    const answer = await api.deleteNamespacedPod({ name: "del", namespace: NS, gracePeriodSeconds: 1 });
    expect(answer.metadata?.deletionTimestamp).toBeInstanceOf(Date);
    expect(answer.metadata?.deletionGracePeriodSeconds).toBe(1);
    await until(() => w.events.some((e) => e.type === "DELETED"));
    expect(pidAlive(pid)).toBe(false);
    expect(w.events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
    expect((await refusal(api.readNamespacedPod({ name: "del", namespace: NS }))).code).toBe(404);
    expect(fs.existsSync(standin.podDir("del"))).toBe(false);
    expect((await sleeper.result).status.status).toBe("Failure");
    w.abort();
  });

  it("a watch dropped by the server and resumed from its last resourceVersion misses nothing", async () => {
    const { api, standin, watcher } = await start();
    await runningPod(api, "one");
    const first = await watchPods(watcher);
    await until(() => first.events.length === 1);
    expect(first.events[0]).toMatchObject({ type: "ADDED", name: "one", phase: "Running" });

    standin.dropWatches();
    expect(await first.ended).toBeNull();
    const last = Math.max(...first.events.map((e) => e.rv));
    await runningPod(api, "two");
    await api.deleteNamespacedPod({ name: "one", namespace: NS, gracePeriodSeconds: 0 });

    const resumed = await watchPods(watcher, { resourceVersion: String(last) });
    await until(() => resumed.events.some((e) => e.name === "one" && e.type === "DELETED"));
    expect(resumed.events.every((e) => e.rv > last)).toBe(true);
    expect(resumed.events.filter((e) => e.name === "two").map((e) => e.type)).toEqual([
      "ADDED",
      "MODIFIED",
      "MODIFIED",
    ]);
    expect(resumed.events.find((e) => e.name === "two" && e.type === "ADDED")?.phase).toBe("Pending");
    resumed.abort();
  });

  it("stop() leaves no process of any pod (a tmux server and a setsid daemon included)", async () => {
    const { api, exec, standin, base } = await start();
    await runningPod(api, "p1");
    await runningPod(api, "p2");
    const long = run(exec, "p1", ["sleep", "1002"]);
    await long.socket;
    // A daemon outside the pod's group and folder: only its environment (HOME) says whose it is.
    const daemon = await run(exec, "p1", [
      "sh",
      "-c",
      "cd / && setsid sleep 1003 >/dev/null 2>&1 < /dev/null &",
    ]).result;
    expect(daemon.status.status).toBe("Success");
    const tmux = await run(exec, "p2", ["tmux", "new-session", "-d", "-s", "in-pod", "sleep 1004"]).result;
    expect(tmux.status.status).toBe("Success");
    // The pod's tmux server has its socket in the pod's folder, not under /tmp.
    expect(fs.readdirSync(standin.podDir("p2"))).toContain(`tmux-${process.getuid?.()}`);
    await until(() => sleepIn(standin.podDir("p1"), "1003") && sleepIn(standin.podDir("p2"), "1004"));
    const pids = processesUnder(base).map((p) => p.pid);
    expect(pids.length).toBeGreaterThanOrEqual(4);

    await standin.stop();
    expect(processesUnder(base)).toEqual([]);
    expect(pids.filter(pidAlive)).toEqual([]);
  });
});
