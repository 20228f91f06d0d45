import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-side");

const AGENT = path.join(REPO, "test", "fixtures", "explicit-agent.mjs");

/** A command-runner child whose agent reports progress, then `muster <kind> <text>`. */
const runExplicitAgent = (progress: string, kind: "done" | "error", text: string) =>
  sb.run([
    "spawn",
    "--agent",
    "command",
    "--json",
    "--wait",
    "task",
    "--",
    process.execPath,
    AGENT,
    BIN,
    progress,
    kind,
    text,
  ]);

describe("inside a child's pane", () => {
  it("muster progress and muster done: a progress event for the turn, the explicit result wins", async () => {
    const r = await runExplicitAgent("halfway there", "done", "the explicit answer");
    expect(r.exitCode, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout).results[0];
    expect(res.text).toBe("the explicit answer");
    const progress = readEvents(res.artifactDir).find((e) => e.type === "progress");
    expect(progress).toMatchObject({ text: "halfway there", turnId: res.turnId });
  });

  it("muster error ends the turn errored with its message", async () => {
    const r = await runExplicitAgent("trying", "error", "could not find the file");
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({
      status: "errored",
      reason: "could not find the file",
    });
  });

  it("outside a pane the child-side commands refuse with exit 2; their help is instant", async () => {
    const r = await sb.run(["done", "x"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("only inside a child's pane");
    const h = await sb.run(["progress", "--help"]);
    expect(h.exitCode).toBe(0);
    expect(h.stdout).toContain("usage: muster progress");
  });

  it("Ctrl-C in the pane cancels only the running turn; the child takes the next one", async () => {
    const s = (await sb.json(["spawn", "mock: hang"])).data;
    await until(async () => (await sb.run(["capture", s.id])).stdout.includes("hanging"), 10_000, 100);
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "C-c"]);
    const w = await sb.json(["wait", s.id, "--timeout", "10s"]);
    expect(w.exitCode).toBe(3);
    expect(w.data.results[0].reason).toContain("Ctrl-C");
    const again = await sb.json(["send", s.id, "--wait", "still here?"]);
    expect(again.exitCode).toBe(0);
    expect((await sb.json(["status", s.id])).data.status).toBe("idle");
  });

  it("cancel with a follow-up queued: both turns settle cancelled, nothing is left in the inbox", async () => {
    const s = (await sb.json(["spawn", "mock: hang"])).data;
    const queued = (await sb.json(["send", s.id, "queued behind the hang"])).data;
    expect(queued.queued).toBe(true);
    await sb.run(["cancel", s.id]);
    const w = await sb.json(["wait", s.id]);
    expect(w.data.results[0]).toMatchObject({
      turnId: queued.turnId,
      status: "cancelled",
      reason: expect.stringContaining("never started"),
    });
    expect(fs.readdirSync(path.join(s.artifactDir, "inbox"))).toEqual([]);
  });
});
