/**
 * The place seam, proved by a second place that lives only in test/fixtures/ns-place.mjs: a child's host
 * runs in a mount namespace whose private tmpfs covers the primary's artifacts folder, so the parent cannot
 * read the child's disk — every record it reads arrives through the artifact mirror, every file it writes
 * for the host leaves through it. Nothing in muster's source knows the place. Root only (mount namespaces).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { render } from "ink-testing-library";
import { createElement } from "react";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMuster, loadBackendModules } from "../../src/index.js";
import { coreActions } from "../../src/tui/actions.js";
import { Top } from "../../src/tui/app.js";
import { TopSource } from "../../src/tui/source.js";
import { pidAlive, readEvents, sandbox, until } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";
import { makeNsPlace, NS_MODULE, type NsPlace } from "../helpers/ns-place.js";
import { placeKeeperOf } from "../helpers/place-keeper.js";

const sb = sandbox("mt-nsp");
const nsDir = path.join(path.dirname(sb.home), "ns");
sb.env.MUSTER_BACKEND_MODULE = NS_MODULE;
sb.env.MUSTER_TEST_NS_DIR = nsDir;
let ns: NsPlace;
let localId = "";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string) => /prompt-sha256: ([0-9a-f]{64})/.exec(text)?.[1];
const hostPidOf = (dir: string): number =>
  readEvents(dir).findLast((e) => e.type === "child_started")?.pid as number;
/** The namespace place's keeper: one process here, one link and one relay hub there, for all its children. */
const keeper = () => placeKeeperOf(sb.home, ns.name);

beforeAll(async () => {
  // A local child first: it makes the primary, whose artifacts folder the namespace then covers.
  const local = await sb.json(["spawn", "--wait", "local first"]);
  expect(local.exitCode).toBe(0);
  localId = local.data.results[0].id;
  const primaries = fs.readdirSync(path.join(sb.home, "primaries"));
  expect(primaries).toHaveLength(1);
  fs.mkdirSync(nsDir, { recursive: true });
  // The artifacts, the conversations and the run-slot tickets are private to the namespace: a host there
  // sees none of this machine's, and this machine none of its.
  const primary = path.join(sb.home, "primaries", primaries[0]!);
  ns = makeNsPlace(
    nsDir,
    "box",
    ["artifacts", "subagents", "slots"].map((d) => path.join(primary, d)),
  );
}, 60_000);

afterAll(async () => {
  await sb.run(["cancel", "--all"]);
  // Each child's mirror ends once its end is in the mirror; the keeper would then wait a while for more.
  if (ns) {
    await until(async () => (await keeper().dirs()).length === 0, 15_000);
    await keeper().stop();
  }
  await ns?.close(sb.socket);
  expect(await sb.cleanup()).toEqual([]);
}, 60_000);

/** Spawns a child in the namespace; returns its id and mirror dir once its runner runs (for a hang). */
async function nsChild(prompt: string, args: string[] = []) {
  const spawned = await sb.json(["spawn", "--place", ns.name, ...args, prompt]);
  expect(spawned.exitCode, spawned.stderr).toBe(0);
  const id = spawned.data.id as string;
  return { id, dir: spawned.data.artifactDir as string };
}

/** A namespace child three seconds into a six-step turn, once its runner runs. */
async function midTurn() {
  const c = await nsChild("mock: sleep=3 tools=6\nlong work");
  await until(() => readEvents(c.dir).some((e) => e.type === "runner_started"), 15_000);
  return c;
}

/** Its turn completes, the completion is in the mirror once, and the mirror is the far log; the turnId. */
async function completesOnce(id: string, dir: string): Promise<string> {
  const waited = await sb.json(["wait", id, "--timeout", "30s"]);
  expect(waited.exitCode, waited.stderr).toBe(0);
  expect(waited.data.results[0]).toMatchObject({ status: "completed" });
  const turnId = waited.data.results[0].turnId;
  expect(readEvents(dir).filter((e) => e.type === "completion" && e.turnId === turnId)).toHaveLength(1);
  const far = ns.inside(["cat", path.join(dir, "events.ndjson")]);
  expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8")).toBe(far);
  return turnId;
}

describe("a place from test/fixtures (a mount namespace), reached only through the artifact mirror", () => {
  it("spawn, wait, send, cancel, resume and lost run there, and the parent reads only its mirror", async () => {
    const prompt = "first task in the namespace\nmock: tools=1";
    const { id, dir } = await nsChild(prompt);
    const waited = await sb.run(["wait", id, "--timeout", "30s"]);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect(shaIn(waited.stdout)).toBe(sha(prompt));

    const st = (await sb.json(["status", id])).data;
    expect(st).toMatchObject({ status: "idle", place: ns.name, backend: "tmux", artifactDir: dir });
    expect((await sb.run(["status", id])).stdout).toMatch(
      /^place {6}ns:box \(its artifacts are mirrored here\)$/m,
    );
    // Two disks: the far dir keeps what only the relay writes; the mirror has what only the keeper writes.
    expect(ns.existsInside(path.join(dir, ".mirror-delivered.ndjson"))).toBe(true);
    expect(fs.existsSync(path.join(dir, ".mirror-delivered.ndjson"))).toBe(false);
    expect(fs.existsSync(path.join(dir, ".mirror.json"))).toBe(true);
    expect(ns.existsInside(path.join(dir, ".mirror.json"))).toBe(false);
    // The spawn's environment was handed over there and taken by the host; it is gone from both sides.
    await until(() => !fs.existsSync(path.join(dir, "env.json")));
    expect(ns.existsInside(path.join(dir, "env.json"))).toBe(false);
    // The conversation came back through the mirror too (resume and fork read it here).
    const session = path.join(dir, "..", "..", "subagents", `${id}.jsonl`);
    await until(() => fs.readFileSync(session, "utf8") === ns.inside(["cat", session]), 10_000);
    expect(fs.readFileSync(session, "utf8")).toContain(sha(prompt));
    // Its seed, the conversation as the spawn began it, was taken there and is gone from both sides.
    await until(() => !fs.existsSync(path.join(dir, "session-seed.jsonl")), 10_000);
    expect(ns.existsInside(path.join(dir, "session-seed.jsonl"))).toBe(false);
    // The mirror's log is the far log, byte for byte.
    expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8")).toBe(
      ns.inside(["cat", path.join(dir, "events.ndjson")]),
    );

    // The attach command reaches the namespace's own tmux server, where the child's pane is.
    const attach = await sb.json(["attach", "--print", id]);
    expect(attach.exitCode, attach.stderr).toBe(0);
    const argv: string[] = attach.data.command;
    expect(argv.slice(0, 3)).toEqual(["env", `TMUX_TMPDIR=${path.join(nsDir, "box-tmux")}`, "nsenter"]);
    const tmuxAt = argv.indexOf("attach-session");
    const panes = execFileSync(argv[0]!, [...argv.slice(1, tmuxAt), "list-panes", "-a", "-F", "#{pane_id}"]);
    expect(panes.toString().split("\n")).toContain(st.pane.paneId);

    // send: the next turn goes out through the mirror to the same host.
    const host1 = hostPidOf(dir);
    const sent = await sb.run(["send", id, "second task", "--wait"]);
    expect(sent.exitCode, sent.stderr).toBe(0);
    expect(shaIn(sent.stdout)).toBe(sha("second task"));
    expect(hostPidOf(dir)).toBe(host1);

    // cancel of a running turn: the host records it there; the record comes back.
    await sb.run(["send", id, "mock: hang"]);
    await until(() => readEvents(dir).filter((e) => e.type === "runner_started").length === 3, 15_000);
    const cancelled = await sb.json(["cancel", id]);
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(cancelled.data.cancelled[0]).toMatchObject({ id, turnCancelled: true });
    await until(() => !pidAlive(host1), 10_000);
    expect(readEvents(dir).at(-1)).toMatchObject({ type: "child_exited" });
    await until(async () => !(await keeper().keeps(dir)), 10_000);

    // resume: a new host there, carried again before it starts.
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "after the cancel"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(shaIn(resumed.data.results[0].text)).toBe(sha("after the cancel"));
    const host2 = hostPidOf(dir);
    expect(host2).not.toBe(host1);

    // lost: the host killed mid-turn; the parent's records of it are written on the far side.
    await sb.run(["send", id, "mock: hang"]);
    await until(() => readEvents(dir).filter((e) => e.type === "runner_started").length === 5, 15_000);
    process.kill(host2, "SIGKILL");
    const lost = await sb.json(["wait", id, "--timeout", "20s"]);
    expect(lost.exitCode).toBe(5);
    expect(lost.data.results[0]).toMatchObject({ status: "lost" });
    expect(lost.data.results[0].reason).toMatch(/child host \(pid \d+\) is gone/);
    const far = ns.inside(["cat", path.join(dir, "events.ndjson")]);
    expect(far).toContain('"by":"parent"');
    await until(() => fs.readFileSync(path.join(dir, "events.ndjson"), "utf8") === far, 10_000);
    expect(
      readEvents(dir)
        .filter((e) => e.type === "child_exited")
        .at(-1),
    ).toMatchObject({ reason: "lost", by: "parent" });
    await until(async () => !(await keeper().keeps(dir)), 10_000);

    // rm: the mirror and the far dir both go.
    expect((await sb.run(["rm", id])).exitCode).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);
    expect(ns.existsInside(dir)).toBe(false);
  }, 120_000);

  it("killing the link mid-turn (not the child) loses nothing: the mirror catches up and the completion comes once", async () => {
    const { id, dir } = await midTurn();
    expect(await keeper().keeps(dir)).toBe(true);
    const [hub, ...more] = keeper().hubs();
    expect(hub).toBeDefined();
    expect(more).toEqual([]);
    process.kill(hub!, "SIGKILL");
    await until(
      () =>
        fs.existsSync(path.join(dir, ".mirror.log")) &&
        fs.readFileSync(path.join(dir, ".mirror.log"), "utf8").includes("mirror link closed"),
      10_000,
    );
    const turnId = await completesOnce(id, dir);
    // Every step the turn reported, before and after the break, is in the mirror once.
    const steps = readEvents(dir).filter((e) => e.type === "tool_activity" && e.phase === "start");
    expect(steps.map((e) => e.summary)).toEqual([1, 2, 3, 4, 5, 6].map((i) => `step ${i} of 6`));
    // Delivered once: a second wait has nothing new to say of that turn, and result reads the same answer.
    const again = await sb.json(["result", id]);
    expect(again.exitCode).toBe(0);
    expect(again.data.turnId ?? again.data.results?.[0]?.turnId).toBe(turnId);
    await sb.run(["cancel", id]);
  }, 90_000);

  it("children there at once share the place's one link: one keeper here, one relay hub there", async () => {
    const [a, b] = [await midTurn(), await midTurn()];
    expect(await keeper().keeps(a.dir)).toBe(true);
    expect(await keeper().keeps(b.dir)).toBe(true);
    expect(keeper().hubs()).toHaveLength(1);
    await Promise.all([completesOnce(a.id, a.dir), completesOnce(b.id, b.dir)]);
    await sb.run(["cancel", a.id, b.id]);
  }, 90_000);

  it("a keeper killed mid-turn is started again by the next probe of its child: the completion still comes, once", async () => {
    const { id, dir } = await midTurn();
    const pid = keeper().pid();
    expect(pid).toBeDefined();
    const hubs = keeper().hubs();
    process.kill(pid!, "SIGKILL");
    await until(() => !pidAlive(pid!), 5000);
    // The relay hub of the dead keeper's link sees its stdin close and goes too.
    await until(() => hubs.every((h) => !pidAlive(h)), 10_000);
    await completesOnce(id, dir);
    expect(keeper().pid()).not.toBe(pid);
    await sb.run(["cancel", id]);
  }, 90_000);

  it("local and namespace children under one primary: ls lists each with its place, one wait takes both, top shows both, a workflow step runs there", async () => {
    const a = await nsChild("ns side");
    const b = await sb.json(["spawn", "local side"]);
    expect(b.exitCode).toBe(0);
    const both = await sb.json(["wait", a.id, b.data.id, "--timeout", "30s"]);
    expect(both.exitCode, both.stderr).toBe(0);
    expect(both.data.results.map((r: { status: string }) => r.status)).toEqual(["completed", "completed"]);
    const ls = (await sb.json(["ls"])).data.children;
    const placeOf = (id: string) => ls.find((c: { id: string }) => c.id === id)?.place;
    expect([placeOf(a.id), placeOf(b.data.id), placeOf(localId)]).toEqual([ns.name, "local", "local"]);

    // From a coding agent's side: the MCP tool takes the place too.
    const client = await connectMcp(sb);
    try {
      const r = await client.callTool(
        { name: "subagents_run", arguments: { prompt: "through MCP", place: ns.name } },
        undefined,
        { timeout: 50_000 },
      );
      const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
      expect(r.isError, text).toBeFalsy();
      const viaMcp = JSON.parse(text);
      expect(viaMcp.status).toBe("completed");
      const id = viaMcp.id ?? viaMcp.results?.[0]?.id;
      expect((await sb.json(["status", id])).data.place).toBe(ns.name);
    } finally {
      await client.close();
    }

    // top shows both, each from its events (the namespace child's from its mirror).
    await loadBackendModules(sb.env, sb.cwd);
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const source = new TopSource(m, { minIntervalMs: 200 });
    try {
      const ui = render(
        createElement(Top, { source, actions: coreActions(m), size: { columns: 120, rows: 30 } }),
      );
      const row = (id: string) => (ui.lastFrame() ?? "").split("\n").find((l) => l.includes(id.slice(-8)));
      await until(() => row(a.id) && row(b.data.id), 15_000);
      expect(row(a.id)).toMatch(/waiting-input|idle|completed/);
      ui.unmount();
    } finally {
      await source.close();
    }

    const run = await sb.json(["workflow", "run", "review-chain", "a change", "--keep"], {
      env: { MUSTER_PLACE: ns.name },
      timeout: 90_000,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.data.status).toBe("completed");
    const stepIds: string[] = run.data.steps.map((s: { childId: string }) => s.childId);
    expect(stepIds.length).toBeGreaterThan(0);
    const after = (await sb.json(["ls"])).data.children;
    for (const sid of stepIds) {
      expect(after.find((x: { id: string }) => x.id === sid)?.place).toBe(ns.name);
      expect(ns.existsInside(path.join(a.dir, "..", sid, "meta.json"))).toBe(true);
    }
  }, 150_000);

  it("one run-slot bound and one budget hold across local and namespace children", async () => {
    // Bound 1: a local turn and a far turn started together run one after the other.
    const one = { MUSTER_MAX_RUNNING: "1" };
    const far = await sb.json(["spawn", "--place", ns.name, "mock: sleep=2\nfar turn"], { env: one });
    const near = await sb.json(["spawn", "mock: sleep=2\nnear turn"], { env: one });
    expect([far.exitCode, near.exitCode]).toEqual([0, 0]);
    const both = await sb.json(["wait", far.data.id, near.data.id, "--timeout", "40s"]);
    expect(both.exitCode, both.stderr).toBe(0);
    const span = (dir: string) => {
      const ev = readEvents(dir);
      const start = Date.parse(ev.find((e) => e.type === "turn_started")!.ts);
      const end = Date.parse(ev.find((e) => e.type === "completion")!.ts);
      return { start, end, queued: ev.some((e) => e.type === "turn_queued") };
    };
    const [a, b] = [span(far.data.artifactDir), span(near.data.artifactDir)];
    expect(a.end <= b.start || b.end <= a.start).toBe(true);
    expect([a.queued, b.queued].filter(Boolean)).toHaveLength(1);

    // Budget of one turn from now: a local turn spends it; the far child's turn, which cannot see the
    // local one's usage on its own disk, is refused by the grant from the parent's side.
    expect((await sb.run(["budget", "--clear"])).exitCode).toBe(0);
    expect((await sb.run(["budget", "--turns", "1"])).exitCode).toBe(0);
    try {
      const spent = await sb.json(["spawn", "--wait", "spends the budget"]);
      expect(spent.exitCode, spent.stderr).toBe(0);
      const refused = await sb.json(["spawn", "--place", ns.name, "--wait", "over budget"]);
      expect(refused.exitCode).toBe(4);
      expect(refused.data.results[0]).toMatchObject({ status: "exhausted" });
      expect(refused.data.results[0].reason).toMatch(/budget/);
    } finally {
      await sb.run(["budget", "--clear"]);
    }
  }, 120_000);

  it("the tree's pause holds across places: a far child's quota error pauses the tree, a far turn waits until resume-tree", async () => {
    try {
      const failing = await sb.json([
        "spawn",
        "--place",
        ns.name,
        "--wait",
        "mock: provider=quota\nneeds the model",
      ]);
      expect(failing.data.results[0]).toMatchObject({ status: "errored", providerError: { kind: "quota" } });
      // The far host cannot reach the parent's state root: the keeper here pauses the tree once it has the completion.
      await until(
        async () => (await sb.json(["ls"])).data.treePaused?.child === failing.data.spawned.id,
        15_000,
      );
      const held = await nsChild("after the quota");
      await until(() => readEvents(held.dir).some((e) => e.type === "turn_held"), 20_000);
      expect(readEvents(held.dir).some((e) => e.type === "turn_started")).toBe(false);
      expect((await sb.json(["resume-tree"])).data.resumed).toMatchObject({ kind: "quota" });
      const done = await sb.json(["wait", held.id, "--timeout", "40s"]);
      expect(done.data.results[0].status, done.stderr).toBe("completed");
    } finally {
      await sb.run(["resume-tree"]);
    }
  }, 120_000);
});
