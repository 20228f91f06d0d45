import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { pidAlive, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-rm");

/** The pane ids alive on the sandbox's private tmux server. */
async function paneIds(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false });
  return String(r.stdout ?? "")
    .split("\n")
    .filter(Boolean);
}

async function spawnJson(args: string[]): Promise<{ id: string; artifactDir: string; paneId: string }> {
  const r = await sb.json(["spawn", "--agent", "mock", ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return r.data.spawned ?? r.data;
}

const sessionFile = (artifactDir: string, id: string): string =>
  path.join(artifactDir, "..", "..", "subagents", `${id}.jsonl`);

describe("muster rm", () => {
  it("removes settled children in one step: pane, artifact dir, conversation file, registry entry", async () => {
    const idle = await spawnJson(["--wait", "first\nmock: tools=1"]);
    const closed = await spawnJson(["--wait", "second"]);
    // --keep-pane: cancel closes a child's pane by default; rm must remove a kept one too.
    expect((await sb.run(["cancel", "--keep-pane", closed.id])).exitCode).toBe(0);
    for (const c of [idle, closed]) {
      expect(fs.existsSync(c.artifactDir)).toBe(true);
      expect(fs.existsSync(sessionFile(c.artifactDir, c.id))).toBe(true);
    }
    expect(await paneIds()).toEqual(expect.arrayContaining([idle.paneId, closed.paneId]));
    const hostPid = readEvents(idle.artifactDir).find((e) => e.type === "child_started")!.pid as number;

    const r = await sb.json(["rm", idle.id.slice(-8), closed.id.slice(-8)]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.removed.map((x: { id: string; status: string }) => [x.id, x.status])).toEqual([
      [idle.id, "idle"],
      [closed.id, "closed"],
    ]);
    for (const c of [idle, closed]) {
      expect(fs.existsSync(c.artifactDir)).toBe(false);
      expect(fs.existsSync(sessionFile(c.artifactDir, c.id))).toBe(false);
    }
    const panes = await paneIds();
    expect(panes).not.toContain(idle.paneId);
    expect(panes).not.toContain(closed.paneId);
    expect(pidAlive(hostPid)).toBe(false);
    const ls = await sb.json(["ls"]);
    expect(ls.data.children.map((c: { id: string }) => c.id)).not.toContain(idle.id);
    expect(ls.data.children.map((c: { id: string }) => c.id)).not.toContain(closed.id);
    const st = await sb.run(["status", idle.id]);
    expect(st.exitCode).toBe(2);
  });

  it("refuses a running child without --force (exit 2, nothing removed); --force cancels it first", async () => {
    const running = await spawnJson(["mock: hang"]);
    const idle = await spawnJson(["--wait", "settled one"]);
    await until(() => readEvents(running.artifactDir).some((e) => e.type === "turn_started"));
    const r = await sb.run(["rm", idle.id, running.id]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/nothing was removed/);
    expect(r.stderr).toContain("--force");
    // Neither was touched: the refusal comes before any removal.
    for (const c of [running, idle]) expect(fs.existsSync(c.artifactDir)).toBe(true);
    const st = await sb.json(["status", running.id]);
    expect(st.data.status).toBe("running");
    expect(await paneIds()).toContain(running.paneId);

    const f = await sb.json(["rm", "--force", running.id, idle.id]);
    expect(f.exitCode, f.stderr).toBe(0);
    expect(f.data.removed).toHaveLength(2);
    expect(f.data.removed[0]).toMatchObject({ id: running.id, status: "running", cancelledTurn: true });
    expect(fs.existsSync(running.artifactDir)).toBe(false);
    expect(await paneIds()).not.toContain(running.paneId);
  });

  it("an unknown id is a clear error and removes nothing, even next to a valid id", async () => {
    const c = await spawnJson(["--wait", "stays"]);
    const r = await sb.run(["rm", c.id, "deadbeef"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/unknown child id "deadbeef"/);
    expect(fs.existsSync(c.artifactDir)).toBe(true);
    const bad = await sb.json(["rm", "../x"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.data.error.code).toBe("invalid_id");
    const none = await sb.run(["rm"]);
    expect(none.exitCode).toBe(2);
    expect((await sb.json(["rm", c.id])).exitCode).toBe(0);
  });
});
