import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";
import { runOnTty } from "../helpers/tty.js";

const sb = useSandbox("mt-hint");

/**
 * The `muster …` command a message suggests, as argv, read as a shell would (single and double quotes):
 * it starts at the first `muster <command>` after the `muster: ` prefix and ends at the end of the line,
 * a parenthesis or a `·`, or before a trailing "lists …" phrase ("muster ls lists this workspace's children").
 */
function suggested(text: string, from = 0): string[] {
  const body = text.replace(/^muster: /gm, "");
  const m = /\bmuster ((?:spawn|wait|ls|agents|cancel|status|send|result|inbox)\b[^()·\n]*)/.exec(
    body.slice(from),
  );
  if (!m) throw new Error(`no muster command suggested in: ${text}`);
  const command = m[1]!.replace(/\s+lists\b.*$/, "").trim();
  const words: string[] = [];
  for (const w of command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(w[1] ?? w[2] ?? w[3]!);
  return words;
}

/** Fills the placeholders a hint leaves to the user. */
const fill = (argv: string[], values: { prompt?: string; id?: string } = {}): string[] =>
  argv.map((w) => (w === "…" ? (values.prompt ?? "a prompt") : w === "<id>" ? values.id! : w));

/** Runs a suggested command and checks it works. */
async function follow(argv: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await sb.run(argv);
  expect([argv.join(" "), r.exitCode, r.stderr]).toEqual([argv.join(" "), 0, expect.any(String)]);
  return r;
}

const spawnWait = async (args: string[]): Promise<string> => {
  const r = await sb.json(["spawn", "--wait", ...args]);
  return r.data.spawned.id as string;
};

describe("every next step muster suggests works when followed", () => {
  it("ls with no children: the spawn it suggests", async () => {
    const ls = await sb.run(["ls"]);
    const argv = suggested(ls.stdout);
    expect(argv.slice(0, 2)).toEqual(["spawn", "--agent"]);
    await follow(argv);
  });

  it("an unknown child id: muster ls; an unknown agent: muster agents; a bad turn: muster status", async () => {
    const unknown = await sb.run(["status", "fffffff0"]);
    expect(unknown.exitCode).toBe(2);
    expect(suggested(unknown.stderr)).toEqual(["ls"]);
    await follow(suggested(unknown.stderr));
    const agent = await sb.run(["spawn", "--agent", "nosuch", "x"]);
    expect(suggested(agent.stderr)).toEqual(["agents"]);
    await follow(suggested(agent.stderr));
    const id = await spawnWait(["one turn"]);
    const turn = await sb.run(["result", id, "--turn", "7"]);
    expect(turn.exitCode).toBe(2);
    expect(suggested(turn.stderr)).toEqual(["status", id.slice(-8)]);
    await follow(suggested(turn.stderr));
  });

  it("result before the turn settled: the wait it suggests", async () => {
    const id = (await sb.run(["spawn", "slow\nmock: sleep=2"])).stdout.trim();
    const early = await sb.run(["result", id]);
    expect(early.exitCode).toBe(2);
    expect(suggested(early.stderr)).toEqual(["wait", id.slice(-8)]);
    await follow(suggested(early.stderr));
  });

  it("resume while a turn runs: the wait it suggests, after which the resume works", async () => {
    const id = (await sb.run(["spawn", "slow\nmock: sleep=2"])).stdout.trim();
    const busy = await sb.run(["spawn", "--resume", id, "again"]);
    expect(busy.exitCode).toBe(2);
    expect(suggested(busy.stderr)).toEqual(["wait", id.slice(-8)]);
    await follow(suggested(busy.stderr));
    await follow(["spawn", "--resume", id, "again"]);
  });

  it("send to a closed child that completed a turn: the resume it suggests", async () => {
    const id = await spawnWait(["first"]);
    await sb.run(["cancel", id]);
    const send = await sb.run(["send", id, "more"]);
    expect(send.exitCode).toBe(2);
    const argv = suggested(send.stderr);
    expect(argv.slice(0, 2)).toEqual(["spawn", "--resume"]);
    const resumed = await sb.run(fill(argv, { prompt: "more" }));
    expect(resumed.exitCode).toBe(0);
    expect((await sb.run(["wait", id])).exitCode).toBe(0);
    await sb.run(["cancel", id]);
  });

  it("send to, or resume of, a closed child with no completed turn: a new child, not a resume", async () => {
    const id = await spawnWait(["fails\nmock: exit=1"]);
    await sb.run(["cancel", id]);
    // The old hint: resuming it fails.
    expect((await sb.run(["spawn", "--resume", id, "again"])).stderr).toMatch(/not resumable/);
    for (const attempt of [
      ["send", id, "more"],
      ["spawn", "--resume", id, "again"],
    ]) {
      const r = await sb.run(attempt);
      expect(r.exitCode).toBe(2);
      const argv = suggested(r.stderr);
      expect(argv).toEqual(["spawn", "--agent", "mock", "…"]);
      const fresh = await follow(fill(argv, { prompt: "a new try" }));
      expect((await sb.run(["wait", fresh.stdout.trim()])).exitCode).toBe(0);
    }
  });

  it("the same for a command child elsewhere: its agent, cwd and argv", async () => {
    const elsewhere = path.join(sb.cwd, "sub dir");
    fs.mkdirSync(elsewhere);
    const run = await sb.run([
      "spawn",
      "--agent",
      "command",
      "--cwd",
      elsewhere,
      "--wait",
      "x",
      "--",
      "false",
    ]);
    expect(run.exitCode).toBe(1);
    const id = (await sb.json(["ls"])).data.children.at(-1).id as string;
    await sb.run(["cancel", id]);
    const send = await sb.run(["send", id, "more"]);
    const argv = suggested(send.stderr);
    expect(argv).toEqual(["spawn", "--agent", "command", "--cwd", elsewhere, "…", "--", "false"]);
    const fresh = await follow(fill(argv));
    const child = (await sb.json(["status", fresh.stdout.trim()])).data;
    expect(child.cwd).toBe(elsewhere);
  });

  it("the command runner without an argv: the example it gives runs", async () => {
    const r = await sb.run(["spawn", "--agent", "command", "task"]);
    expect(r.exitCode).toBe(2);
    const argv = suggested(r.stderr);
    expect(argv.slice(0, 3)).toEqual(["spawn", "--agent", "command"]);
    const id = (await follow(argv)).stdout.trim();
    const waited = await sb.run(["wait", id]);
    expect(waited.exitCode).toBe(0);
    // Byte-exact into a pipe: the example's command prints the prompt with no line break.
    expect(waited.stdout).toBe("task");
  });

  it("the live-node limit: the cancel it suggests makes room", async () => {
    const live = (await sb.json(["ls"])).data.children.filter(
      (c: { status: string }) => c.status !== "closed" && c.status !== "lost",
    );
    expect(live.length).toBeGreaterThan(0);
    const env = { MUSTER_MAX_LIVE: String(live.length) };
    const refused = await sb.run(["spawn", "one too many"], { env });
    expect(refused.exitCode).toBe(2);
    await follow(fill(suggested(refused.stderr), { id: live[0].id }));
    const after = await sb.run(["spawn", "one too many"], { env });
    expect(after.exitCode).toBe(0);
  });

  it("inbox: an unsealed group says how to seal it", async () => {
    const spawned = await sb.run(["spawn", "--group", "g1", "member"]);
    expect(spawned.exitCode).toBe(0);
    const inbox = await sb.run(["inbox", "--peek"]);
    const line = inbox.stdout.split("\n").find((l) => l.startsWith("group g1"))!;
    expect(suggested(line)).toEqual(["wait", "--group", "g1"]);
    await follow(suggested(line));
  });

  it("a child's idle pane: the send it shows", async () => {
    const id = await spawnWait(["idle after this"]);
    const pane = await until(async () => {
      const text = (await sb.run(["capture", id])).stdout;
      return /idle — type a follow-up/.test(text) ? text : undefined;
    });
    const argv = suggested(pane, pane.lastIndexOf("idle — "));
    expect(argv).toEqual(["send", id.slice(-8), "…"]);
    await follow(fill(argv, { prompt: "a follow-up" }));
    expect((await sb.run(["wait", id])).exitCode).toBe(0);
  });

  it("spawn on a terminal: the wait it suggests", async () => {
    const tty = await runOnTty(sb, ["spawn", "on a terminal"]);
    expect([tty.exitCode, tty.raw.toString("utf8")]).toEqual([0, expect.any(String)]);
    const text = tty.raw.toString("utf8").replaceAll("\r", "");
    const argv = suggested(text);
    expect(argv[0]).toBe("wait");
    await follow(argv);
  });
});
