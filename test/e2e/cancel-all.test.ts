import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-cancel");
const N = 20;
const BOUND = 2;
const env = { MUSTER_MAX_RUNNING: String(BOUND) };

interface Row {
  id: string;
  status: string;
  artifactDir: string;
}

const children = async (): Promise<Row[]> => (await sb.json(["ls"], { env })).data.children;
const count = (rows: Row[], status: string): number => rows.filter((r) => r.status === status).length;

/** Pane ids on the sandbox's private tmux server. */
async function panes(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-panes", "-a", "-F", "#{pane_id}"], { reject: false });
  return String(r.stdout).split("\n").filter(Boolean);
}

/** turnIds still waiting in a child's inbox (not started). */
const inboxTurns = (dir: string): string[] =>
  fs
    .readdirSync(path.join(dir, "inbox"))
    .filter((n) => n.endsWith(".json") && !n.startsWith("."))
    .map((n) => n.slice("0000000000000001-".length, -".json".length));

describe("cancel --all", () => {
  it(`${N} children, ${BOUND} run slots: ls never shows more running than the bound; cancel --all drops queued turns before stopping any, closes every child and pane`, async () => {
    // Sample ls while the children start: a child whose turn has no slot yet is queued, never running.
    let sampling = true;
    const runningSeen: number[] = [];
    const sampler = (async () => {
      while (sampling) runningSeen.push(count(await children(), "running"));
    })();
    const spawned = await Promise.all(
      Array.from({ length: N }, (_, i) => sb.json(["spawn", `hang ${i}\nmock: hang`], { env })),
    );
    const paneIds = spawned.map((s) => s.data.paneId as string);
    // The states last seen, for the failure message if they never settle as expected.
    let last = "";
    await until(
      async () => {
        const rows = await children();
        // Any child neither running nor queued, with its last record: a host that never started says why.
        const odd = rows
          .filter((r) => r.status !== "running" && r.status !== "queued")
          .map(
            (r) =>
              `${r.id.slice(-8)} ${r.status}: ${JSON.stringify(readEvents(r.artifactDir).at(-1) ?? null)}`,
          );
        last = `${JSON.stringify(rows.map((r) => r.status))}${odd.length ? `; ${odd.join("; ")}` : ""}`;
        return count(rows, "running") === BOUND && count(rows, "queued") === N - BOUND;
      },
      90_000,
      250,
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}; last ls: ${last}; spawns: ${JSON.stringify(spawned.map((s) => (s.exitCode ? `${s.exitCode}: ${s.stderr}` : 0)))}`,
      );
    });
    sampling = false;
    await sampler;
    expect(runningSeen.length).toBeGreaterThan(0);
    expect(Math.max(...runningSeen)).toBeLessThanOrEqual(BOUND);

    const rows = await children();
    const queued = new Map(rows.flatMap((r) => inboxTurns(r.artifactDir).map((t) => [t, r.artifactDir])));
    expect(queued.size).toBe(N - BOUND);
    expect((await panes()).filter((p) => paneIds.includes(p))).toHaveLength(N);

    const t0 = Date.now();
    const c = await sb.json(["cancel", "--all"], { env });
    console.log(
      `cancel --all of ${N} children (${BOUND} running, ${N - BOUND} queued): ${Date.now() - t0} ms`,
    );
    expect(c.exitCode).toBe(0);
    expect(c.data.cancelled).toHaveLength(N);
    expect(c.data.cancelled.every((x: { pane: string }) => x.pane === "closed")).toBe(true);

    const after = await children();
    expect(after.every((r) => r.status === "closed")).toBe(true);
    // No queued turn ever got an agent: each settled cancelled without a runner_started.
    for (const [turnId, dir] of queued) {
      const events = readEvents(dir).filter((e) => e.turnId === turnId);
      expect(
        events.some((e) => e.type === "runner_started"),
        `queued turn ${turnId} started an agent`,
      ).toBe(false);
      expect(events.find((e) => e.type === "completion")).toMatchObject({ status: "cancelled" });
    }
    // Every cancelled child's pane is closed.
    expect((await panes()).filter((p) => paneIds.includes(p))).toEqual([]);
  }, 180_000);
});
