/**
 * A child's whole life through the real CLI, written once for every backend: spawn, wait, capture, a
 * follow-up (inbox), a line typed into the pane, the pane's process killed (→ lost), resume, cancel.
 * Each backend's test file runs it with what differs: how its pane is killed and what must be gone after.
 */
import { createHash } from "node:crypto";
import { expect } from "vitest";
import { createMuster } from "../../src/index.js";
import { pidAlive, readEvents, type Sandbox, until } from "./cli.js";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string) => /prompt-sha256: ([0-9a-f]{64})/.exec(text)?.[1];
// biome-ignore lint/suspicious/noExplicitAny: status JSON as the CLI prints it
type Status = Record<string, any>;

export interface BackendCase {
  name: string;
  /** What selects the backend for a spawn (MUSTER_BACKEND=…). */
  env: NodeJS.ProcessEnv;
  /** Kills what holds the child's pane the hard way (kill -9): its host must be settled `lost`. */
  killPane(status: Status): void;
  /** After cancel: whatever of the pane must be gone is gone. */
  paneClosed(status: Status): Promise<void>;
}

const hostPidOf = (dir: string): number =>
  readEvents(dir).findLast((e) => e.type === "child_started")?.pid as number;

/** Types a line into the child's pane through its backend, as a person at the pane would. */
async function typeLine(sb: Sandbox, id: string, text: string): Promise<void> {
  const m = createMuster({ env: sb.env, cwd: sb.cwd });
  const c = m.child(id);
  if (!c.entry.pane) throw new Error("no pane");
  await m.backendOf(c.entry).send(c.entry.pane, text, { enter: true });
}

export async function lifecycleScenario(sb: Sandbox, b: BackendCase): Promise<void> {
  const status = async (id: string): Promise<Status> => (await sb.json(["status", id])).data;
  const prompt = "first task\nmock: tools=1";
  const spawned = await sb.json(["spawn", prompt], { env: b.env });
  expect(spawned.exitCode).toBe(0);
  expect(spawned.data.backend).toBe(b.name);
  const id = spawned.data.id as string;

  const waited = await sb.run(["wait", id, "--timeout", "30s"]);
  expect(waited.exitCode).toBe(0);
  expect(shaIn(waited.stdout)).toBe(sha(prompt));
  const st = await status(id);
  expect(st).toMatchObject({ status: "idle", backend: b.name, pane: { backend: b.name } });
  const cap = await sb.run(["capture", id, "--lines", "50"]);
  expect(cap.exitCode).toBe(0);
  expect(cap.stdout).toContain("▶ turn 1 (inbox) first task");
  expect(cap.stdout).toMatch(/■ completed in/);

  // A follow-up through the inbox runs in the same host.
  const host1 = hostPidOf(st.artifactDir);
  const sent = await sb.run(["send", id, "second task", "--wait"]);
  expect(sent.exitCode).toBe(0);
  expect(shaIn(sent.stdout)).toBe(sha("second task"));
  expect(hostPidOf(st.artifactDir)).toBe(host1);

  // A line typed into the pane is a turn too.
  await typeLine(sb, id, "typed by a person");
  await until(async () => {
    const s = await status(id);
    return s.turnList.length === 3 && s.status === "idle";
  }, 15_000);
  expect(shaIn((await sb.run(["result", id])).stdout)).toBe(sha("typed by a person"));
  expect((await status(id)).turnList[2].source).toBe("typed");
  expect((await sb.run(["capture", id])).stdout).toContain("typed by a person");

  // The pane's holder killed mid-turn: the child is lost within 5 s, its runner stopped.
  await sb.run(["send", id, "mock: hang"]);
  await until(() => readEvents(st.artifactDir).filter((e) => e.type === "runner_started").length === 4);
  const runner = readEvents(st.artifactDir).findLast((e) => e.type === "runner_started")?.pid as number;
  b.killPane(st);
  const lost = await sb.json(["wait", id, "--timeout", "5s"]);
  expect(lost.exitCode).toBe(5);
  expect(lost.data.results[0]).toMatchObject({ status: "lost" });
  await until(() => !pidAlive(runner) && !pidAlive(host1), 5000);
  expect((await status(id)).status).toBe("lost");

  // Resume: a new host in a new pane of the same backend, whatever the default is now.
  const other = b.name === "tmux" ? "pty" : "tmux";
  const resumed = await sb.json(["spawn", "--resume", id, "--wait", "after the loss"], {
    env: { MUSTER_BACKEND: other },
  });
  expect(resumed.exitCode).toBe(0);
  expect(shaIn(resumed.data.results[0].text)).toBe(sha("after the loss"));
  expect(resumed.data.results[0].text).toMatch(/history-turns: 3/);
  const after = await status(id);
  expect(after).toMatchObject({ status: "idle", backend: b.name, pane: { backend: b.name } });
  expect(JSON.stringify(after.pane)).not.toBe(JSON.stringify(st.pane));
  const host2 = hostPidOf(after.artifactDir);
  expect(host2).not.toBe(host1);

  // Cancel: SIGTERM through the host control; the child records it, and its pane is closed.
  const cancelled = await sb.json(["cancel", id]);
  expect(cancelled.exitCode).toBe(0);
  expect(cancelled.data.cancelled[0]).toMatchObject({ id, by: "child", pane: "closed" });
  await until(() => !pidAlive(host2), 5000);
  // It was idle: nothing to cancel, so it is closed.
  expect(readEvents(after.artifactDir).at(-1)).toMatchObject({ type: "child_exited", reason: "closed" });
  await b.paneClosed(after);
}
