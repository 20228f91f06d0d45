/**
 * Push notifications (`muster notify`): a local receiver on 127.0.0.1 gets one notice per waiting, finished and
 * failed event of a child, filtered per target; a command target runs by argv; a receiver that never answers
 * does not hold up the child's completion or its delivery.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEvents, until, useSandbox } from "../helpers/cli.js";
import { hooks, type Receiver, receiver } from "../helpers/notify-receiver.js";

const sb = useSandbox("mt-notify");

describe("muster notify", () => {
  let rx: Receiver;
  const commandLog = path.join(sb.home, "notices.ndjson");

  beforeAll(async () => {
    rx = await receiver();
    const add = async (args: string[]) => {
      const r = await sb.run(["notify", "add", ...args]);
      expect(r.exitCode, r.stderr).toBe(0);
    };
    await add(["webhook", rx.url("/hook")]);
    await add(["ntfy", rx.url("/topic"), "--events", "waiting"]);
    const appendNotice = "require('fs').appendFileSync(process.argv[1], process.env.NOTIFY_JSON + '\\n')";
    await add(["command", "--events", "failed", "--", process.execPath, "-e", appendNotice, commandLog]);
  });

  afterAll(async () => {
    await rx.close();
  });

  it("ls lists the targets; bad ones are refused in one line", async () => {
    const ls = (await sb.json(["notify", "ls"])).data.targets as { kind: string; events?: string[] }[];
    expect(ls.map((t) => [t.kind, t.events ?? null])).toEqual([
      ["webhook", null],
      ["ntfy", ["waiting"]],
      ["command", ["failed"]],
    ]);
    for (const [args, said] of [
      [["ntfy", "ftp://x/y"], /http or https/],
      [["webhook", "http://me:pw@127.0.0.1/"], /user or password/],
      [["pager", "x"], /unknown notification kind/],
      [["ntfy", rx.url("/t"), "--events", "waiting,soon"], /not "soon"/],
      [["command"], /argv/],
    ] as const) {
      const r = await sb.run(["notify", "add", ...args]);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(said);
    }
    expect((await sb.json(["notify", "ls"])).data.targets).toHaveLength(3);
  });

  it("a finished turn, a failed one and a question each notify once, each target only of what it asked for", async () => {
    const done = (await sb.json(["spawn", "--wait", "all good"])).data;
    const doneId = done.spawned.id as string;
    const failed = await sb.json(["spawn", "--wait", "breaks\nmock: exit=3"]);
    const failedId = failed.data.spawned.id as string;
    const spawned = await sb.run([
      ...["spawn", "--json", "--agent", "command", "task"],
      ...["--", "sh", "-c", 'muster ask "Which colour?"', "sh"],
    ]);
    const asking = JSON.parse(spawned.stdout).id as string;
    await until(() => hooks(rx, "/hook").some((n) => n.child === asking && n.event === "waiting"), 20_000);
    const q = await until(
      async () =>
        (await sb.json(["inbox", "--peek"])).data.requests.find((r: { child: string }) => r.child === asking),
      20_000,
    );
    expect((await sb.run(["answer", q.id, "teal"])).exitCode).toBe(0);
    await sb.json(["wait", asking, "--timeout", "30s"]);
    await until(() => hooks(rx, "/hook").some((n) => n.child === asking && n.event === "finished"), 20_000);

    const byChild = (id: string) =>
      hooks(rx, "/hook")
        .filter((n) => n.child === id)
        .map((n) => n.event);
    await until(() => byChild(doneId).length > 0 && byChild(failedId).length > 0, 20_000);
    expect(byChild(doneId)).toEqual(["finished"]);
    expect(byChild(failedId)).toEqual(["failed"]);
    expect(byChild(asking)).toEqual(["waiting", "finished"]);
    const failure = hooks(rx, "/hook").find((n) => n.child === failedId)!;
    expect(failure).toMatchObject({ status: "errored", agent: "mock" });
    expect(failure.text).toContain("exit code 3");
    // Each event once: no notice repeats an event id.
    const ids = hooks(rx, "/hook").map((n) => n.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    // The ntfy topic asked for waiting only: the question, as a high-priority push with its text.
    const topic = rx.got.filter((g) => g.path === "/topic");
    expect(topic).toHaveLength(1);
    expect(topic[0]!.body).toBe("Which colour?");
    expect(topic[0]!.headers.title).toMatch(/asks a question$/);
    expect(topic[0]!.headers.priority).toBe("high");
    // The command target asked for failed only: one notice, in its environment.
    await until(() => fs.existsSync(commandLog), 10_000);
    const lines = fs
      .readFileSync(commandLog, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.event, l.child])).toEqual([["failed", failedId]]);
  });

  it("a receiver that never answers does not hold up a completion's delivery", async () => {
    const add = await sb.json(["notify", "add", "webhook", rx.url("/hang")]);
    try {
      const r = await sb.json(["spawn", "--wait", "quick"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const id = r.data.spawned.id as string;
      // The completion was delivered while the notice about it was still waiting for an answer.
      await until(() => rx.got.some((g) => g.path === "/hang" && JSON.parse(g.body).child === id), 10_000);
      expect(rx.held.some((res) => !res.writableEnded)).toBe(true);
    } finally {
      await sb.run(["notify", "rm", add.data.id]);
    }
  });

  it("a host that records its own end (its pane closed: lost) and exits at once still gets that notice out", async () => {
    const add = await sb.json(["notify", "add", "webhook", rx.url("/ends"), "--events", "lost"]);
    try {
      const r = await sb.json(["spawn", "--wait", "then idle"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const { id, paneId, artifactDir } = r.data.spawned as {
        id: string;
        paneId: string;
        artifactDir: string;
      };
      await execa("tmux", ["-L", sb.socket, "kill-pane", "-t", paneId]);
      await until(() => hooks(rx, "/ends").some((n) => n.child === id), 15_000);
      // The host recorded it itself, then exited: the notice went from a sender of its own.
      expect(readEvents(artifactDir).filter((e) => e.type === "child_exited")).toEqual([
        expect.objectContaining({ reason: "lost", by: "child" }),
      ]);
      expect(hooks(rx, "/ends").filter((n) => n.child === id)).toEqual([
        expect.objectContaining({ event: "lost", child: id }),
      ]);
    } finally {
      await sb.run(["notify", "rm", add.data.id]);
    }
  });

  it("notify test sends one notice to each target and says how each went", async () => {
    const before = rx.got.length;
    const r = await sb.json(["notify", "test"]);
    expect(r.exitCode).toBe(0);
    expect(r.data.results.map((x: { ok: boolean }) => x.ok)).toEqual([true, true, true]);
    expect(rx.got.length).toBe(before + 2);
    expect((await sb.run(["notify", "test", "nosuch"])).exitCode).toBe(2);
    const dead = await sb.json(["notify", "add", "webhook", "http://127.0.0.1:9/closed"]);
    const failed = await sb.run(["notify", "test", dead.data.id]);
    expect(failed.exitCode).toBe(1);
    expect(failed.stdout).toContain("failed");
    expect((await sb.run(["notify", "rm", dead.data.id])).exitCode).toBe(0);
  });
});
