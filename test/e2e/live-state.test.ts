import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { LiveState } from "../../src/core/live-state.js";
import { createMuster, type MusterEvent } from "../../src/index.js";
import { readEvents, until, useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-live");

/** The live state `ls --json` shows for one child (env: the reader's, e.g. its stall limit). */
async function lsLive(id: string, env: NodeJS.ProcessEnv = {}): Promise<LiveState> {
  const ls = await sb.json(["ls"], { env });
  return ls.data.children.find((c: { id: string }) => c.id === id).live;
}

/** Waits until `ls --json` shows the child in `state`; returns that live object. */
const lsUntil = (id: string, state: string, env: NodeJS.ProcessEnv = {}, ms = 40_000) =>
  until(
    async () => {
      const l = await lsLive(id, env);
      return l.state === state ? l : undefined;
    },
    ms,
    100,
  );

async function mcpStatus(id: string): Promise<Record<string, unknown>> {
  const client = await connectMcp(sb);
  try {
    const r = await client.callTool({ name: "subagents_status", arguments: { id } }, undefined, {
      timeout: 20_000,
    });
    return JSON.parse((r.content as { text: string }[])[0]!.text);
  } finally {
    await client.close();
  }
}

describe("live state of real children (ls, status, MCP, library)", () => {
  it("starting while the pane's host has not started; working once it has", async () => {
    // The pane runs `env -u NODE_EXTRA_CA_CERTS node host.bundle.js <dir>` from its PATH: this `env` holds it
    // on a FIFO until the test writes a line, so the host is really not started yet (as in host-start.test.ts).
    const base = path.dirname(sb.home);
    const bin = path.join(base, "held-bin");
    const fifo = path.join(base, "held.fifo");
    fs.mkdirSync(bin);
    execFileSync("mkfifo", [fifo]);
    fs.writeFileSync(
      path.join(bin, "env"),
      `#!/bin/sh\nread -r _ < ${JSON.stringify(fifo)}\nexec /usr/bin/env "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const id = (await sb.json(["spawn", "held\nmock: sleep=2"], { env })).data.id as string;
    const starting = await lsLive(id);
    expect(starting.state).toBe("starting");
    expect((await sb.json(["status", id])).data.live.state).toBe("starting");
    fs.writeFileSync(fifo, "go\n");
    await lsUntil(id, "working");
    await lsUntil(id, "waiting-input");
  });

  it("working with the running tool, then waiting-input once the turn settled", async () => {
    const id = (await sb.json(["spawn", "two tools\nmock: sleep=8 tools=2"])).data.id as string;
    const working = await until(
      async () => {
        const l = await lsLive(id);
        return l.state === "working" && /^(read_file|grep) step \d of 2$/.test(l.detail ?? "")
          ? l
          : undefined;
      },
      20_000,
      100,
    );
    expect(Date.parse(working.since)).toBeLessThanOrEqual(Date.now());
    const st = await sb.json(["status", id]);
    expect(st.data.live.state).toMatch(/^(working|waiting-input)$/);
    expect((await sb.run(["status", id])).stdout).toMatch(/^state {6}(working|waiting-input) \(/m);

    const idle = await lsUntil(id, "waiting-input");
    expect(idle.detail).toBe("last turn completed");
    expect((await mcpStatus(id)).live).toMatchObject({ state: "waiting-input" });
    const human = (await sb.run(["ls"])).stdout;
    expect(human.split("\n")[0]).toMatch(/\bSTATE\b/);
    expect(human.split("\n").find((l) => l.startsWith(id.slice(-8)))).toContain("waiting-input");
  });

  it("stalled when an open turn writes no event for the reader's stall limit", async () => {
    const id = (await sb.json(["spawn", "quiet\nmock: sleep=6"])).data.id as string;
    const stall = { MUSTER_STALL_SECONDS: "1" };
    const stalled = await lsUntil(id, "stalled", stall);
    expect(stalled.detail).toMatch(/^no event for \d+s$/);
    // The same moment with the default limit (60 s) is still working.
    expect((await lsLive(id)).state).toMatch(/^(working|waiting-input)$/);
    await lsUntil(id, "waiting-input", stall);
  });

  it("waiting-permission while the runner waits for one; idle after a turn that had one refused, with the hint", async () => {
    const asking = (await sb.json(["spawn", "asks\nmock: ask=Bash sleep=8"])).data.id as string;
    const pending = await lsUntil(asking, "waiting-permission");
    expect(pending.detail).toBe("asks permission for Bash: mock: ask");
    await lsUntil(asking, "waiting-input");

    const refused = (await sb.json(["spawn", "refused\nmock: deny=WebFetch"])).data.id as string;
    const w = await lsUntil(refused, "waiting-input");
    expect(w.detail).toContain("permission refused for WebFetch");
    expect((await sb.json(["status", refused])).data.live.state).toBe("waiting-input");
    // A new turn (after the person allowed it) clears it.
    await sb.run(["send", refused, "again, now allowed"]);
    await until(async () => (await sb.json(["status", refused])).data.turns === 2, 20_000, 100);
    await lsUntil(refused, "waiting-input");
  });

  it("queued while waiting for a run slot; settled outcomes once closed", async () => {
    const env = { MUSTER_MAX_RUNNING: "1" };
    const hog = (await sb.json(["spawn", "mock: hang"], { env })).data.id as string;
    await lsUntil(hog, "working");
    const waiting = (await sb.json(["spawn", "behind the hog"], { env })).data.id as string;
    const q = await lsUntil(waiting, "queued");
    expect(q.detail).toBe("waiting for a run slot (1 of 1 busy)");
    expect((await mcpStatus(waiting)).live).toMatchObject({ state: "queued" });

    await sb.run(["cancel", hog]);
    expect((await lsUntil(hog, "cancelled")).state).toBe("cancelled");
    await lsUntil(waiting, "waiting-input");
    // Idle when cancelled: no turn stopped, so it is closed, not cancelled.
    await sb.run(["cancel", waiting]);
    await lsUntil(waiting, "closed");

    // A host that dies without a word: ls settles it, and it shows lost with the reason.
    const doomed = (await sb.json(["spawn", "mock: hang"])).data.id as string;
    await lsUntil(doomed, "working");
    const dir = (await sb.json(["status", doomed])).data.artifactDir as string;
    const started = readEvents(dir).find((e) => e.type === "child_started");
    process.kill(started!.pid as number, "SIGKILL");
    const lost = await lsUntil(doomed, "lost");
    expect(lost.detail).toMatch(/child host \(pid \d+\) is gone/);
  });

  it("the library's watcher skips probing a child it heard from within its tick, and still finds its host dead once it goes quiet", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const exits: { id: string; e: MusterEvent }[] = [];
    const w = await m.watch({
      onEvent: (id, e) => (e.type === "child_exited" ? exits.push({ id, e }) : undefined),
    });
    try {
      // A tool start or end every second: heard from within every 2 s tick.
      const { id, artifactDir } = await m.spawn({ agent: "mock", prompt: "busy\nmock: sleep=60 tools=30" });
      await until(() => w.live(id)?.state === "working", 20_000, 50);
      const hostPid = readEvents(artifactDir).find((e) => e.type === "child_started")!.pid as number;
      process.kill(hostPid, "SIGKILL");
      // Quiet from then on: probed on the first tick after its last event, so within two ticks and a probe.
      const exited = await until(() => exits.find((x) => x.id === id)?.e, 10_000, 50);
      expect(exited).toMatchObject({ type: "child_exited", reason: "lost", by: "parent" });
    } finally {
      await w.close();
    }
  });

  it("the library's watcher reports each change within its 2 s tick, stalls included", async () => {
    const m = createMuster({ env: { ...sb.env, MUSTER_STALL_SECONDS: "1" }, cwd: sb.cwd });
    const seen = new Map<string, { state: string; at: number }[]>();
    const w = await m.watch({
      onEvent: () => {},
      onLive: (id, live) => {
        const list = seen.get(id) ?? [];
        list.push({ state: live.state, at: Date.now() });
        seen.set(id, list);
      },
    });
    try {
      const { id } = await m.spawn({ agent: "mock", prompt: "quiet, then a tool\nmock: sleep=10 tools=1" });
      const states = () => (seen.get(id) ?? []).map((s) => s.state);
      await until(() => states().includes("working") && states().at(-1) === "waiting-input", 30_000, 100);
      // Between spawn and its first turn the child is never shown waiting for input.
      expect(states().slice(0, states().indexOf("working"))).not.toContain("waiting-input");
      // sleep=10 tools=1: a tool start, 5 s of silence (stalled after 1 s, seen on a 2 s tick), its end, 5 s more.
      expect(states()).toContain("working");
      expect(states()).toContain("stalled");
      expect(states().indexOf("stalled")).toBeLessThan(states().lastIndexOf("waiting-input"));
      expect(w.live(id)?.state).toBe("waiting-input");
      const fromList = (await m.list()).find((c) => c.entry.id === id)!;
      expect(fromList.live.state).toBe("waiting-input");
    } finally {
      await w.close();
    }
  });
});
