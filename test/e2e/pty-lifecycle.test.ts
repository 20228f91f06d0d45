/**
 * A child's life on the embedded pty backend through the real CLI: the same scenario as on tmux
 * (test/helpers/lifecycle.ts, run here on both), then what only pty has: chosen automatically without
 * tmux or Zellij, `focus` refused, a holder killed with SIGKILL settling `lost`. The sandbox's cleanup
 * fails the file if any holder, host or runner is left running.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { pidAlive, readEvents, until, useSandbox } from "../helpers/cli.js";
import { type BackendCase, lifecycleScenario } from "../helpers/lifecycle.js";

const sb = useSandbox("mt-ptyl");
const onPty = { MUSTER_BACKEND: "pty" };

async function tmuxPanes(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false });
  return String(r.stdout).split("\n").filter(Boolean);
}

const cases: BackendCase[] = [
  {
    name: "pty",
    env: onPty,
    killPane: (st) => process.kill(st.pane.data.pid, "SIGKILL"),
    async paneClosed(st) {
      await until(() => !pidAlive(st.pane.data.pid) && !pidAlive(st.pane.data.childPid), 5000);
      expect(fs.existsSync(path.join(sb.home, "backends", "pty", st.pane.id))).toBe(false);
      expect(fs.existsSync(st.pane.data.socket)).toBe(false);
    },
  },
  {
    name: "tmux",
    env: { MUSTER_BACKEND: "tmux" },
    killPane: (st) =>
      process.kill(readEvents(st.artifactDir).findLast((e) => e.type === "child_started")?.pid, "SIGKILL"),
    async paneClosed(st) {
      expect(await tmuxPanes()).not.toContain(st.pane.paneId);
    },
  },
];

describe.each(cases)("a child's life on $name through the real CLI", (b) => {
  it("spawn, wait, capture, send, a typed line, kill -9 of the pane (lost), resume, cancel", async () => {
    const before = await tmuxPanes();
    await lifecycleScenario(sb, b);
    // Nothing of a pty child went to tmux.
    if (b.name === "pty") expect(await tmuxPanes()).toEqual(before);
  });
});

describe("only on pty", () => {
  it("is chosen when neither tmux nor Zellij is on PATH; MUSTER_BACKEND still wins", async () => {
    const bin = fs.mkdtempSync(path.join(path.dirname(sb.home), "bin-"));
    fs.symlinkSync(process.execPath, path.join(bin, "node"));
    fs.symlinkSync("/usr/bin/env", path.join(bin, "env"));
    // A PATH with env and node (the host's command; the mock runner needs nothing else), no multiplexer.
    const noMux = { PATH: bin, MUSTER_BACKEND: "" };
    // doctor: tmux is missing, but children can run here (exit 0).
    const doc = await sb.json(["doctor"], { env: noMux });
    expect(doc.exitCode).toBe(0);
    expect(doc.data).toMatchObject({ ok: true, tmux: { ok: false }, backend: { name: "pty", ok: true } });
    expect(doc.data.backend.version).toMatch(/^node-pty \d/);
    const s = await sb.json(["spawn", "--wait", "auto"], { env: noMux });
    expect(s.exitCode).toBe(0);
    expect(s.data.spawned.backend).toBe("pty");
    const forced = await sb.json(["spawn", "--backend", "tmux", "--wait", "forced"], {
      env: { PATH: process.env.PATH, MUSTER_BACKEND: "" },
    });
    expect(forced.data.spawned.backend).toBe("tmux");
    for (const id of [s.data.spawned.id, forced.data.spawned.id])
      expect((await sb.json(["cancel", id])).exitCode).toBe(0);
  });

  it("focus says it needs a multiplexer (non-zero, nothing attached); attach --print names the pty client", async () => {
    const s = await sb.json(["spawn", "--wait", "to focus"], { env: onPty });
    const id = s.data.spawned.id as string;
    const focus = await sb.run(["focus", id]);
    expect(focus.exitCode).not.toBe(0);
    expect(focus.stderr).toMatch(/focus needs a multiplexer \(tmux or Zellij\)/);
    const print = await sb.run(["attach", "--print", id]);
    expect(print.exitCode).toBe(0);
    expect(print.stdout).toMatch(/dist\/mux\/pty\/attach\.js/);
    expect((await sb.json(["cancel", id])).exitCode).toBe(0);
  });

  it("a holder killed with SIGKILL while the child is idle: lost, and the host does not linger", async () => {
    const s = await sb.json(["spawn", "--wait", "idle then lost"], { env: onPty });
    const id = s.data.spawned.id as string;
    const st = (await sb.json(["status", id])).data;
    const host = readEvents(st.artifactDir).find((e) => e.type === "child_started")?.pid as number;
    process.kill(st.pane.data.pid, "SIGKILL");
    await until(async () => (await sb.json(["status", id])).data.status === "lost", 5000, 100);
    await until(() => !pidAlive(host), 5000);
    // gc closes what is left of the pane (its folder, the stale socket).
    const gc = await sb.json(["gc", "--older-than", "0s"]);
    expect(gc.exitCode).toBe(0);
    expect(fs.existsSync(path.join(sb.home, "backends", "pty", st.pane.id))).toBe(false);
  });
});
