/**
 * `muster top` as a person uses it: the built CLI in a real tmux pane (its own private server), keys sent
 * with send-keys, the screen read with capture-pane. The children run on the sandbox's private server.
 */
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, delegating, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait, privateSocket } from "../helpers/tmux.js";

const sb = useSandbox("mt-toptm");
const ui = privateSocket("mt-topui");
const tmux = async (args: string[]) =>
  String((await execa("tmux", ["-L", ui, ...args], { reject: false, stdin: "ignore" })).stdout);
const screen = () => tmux(["capture-pane", "-p", "-t", "top"]);
const keys = async (...k: string[]) => {
  for (const key of k) {
    await tmux(["send-keys", "-t", "top", key]);
    await new Promise((r) => setTimeout(r, 150));
  }
};
const short = (id: string) => id.slice(-8);
const status = async (id: string) => (await sb.json(["status", id])).data;
/** From the top row, presses j until the expanded details (Enter) name `id`; returns with it expanded. */
async function select(id: string): Promise<void> {
  await keys("k", "k", "k", "k", "k", "k"); // to the top row
  for (let i = 0; i < 8; i++) {
    await keys("Enter");
    const shown = await until(async () => /^ {4}id [0-9a-f-]{36}/m.exec(await screen())?.[0], 5_000);
    if (shown.includes(id)) return;
    await keys("Enter", "j");
  }
  throw new Error(`could not select ${id}:\n${await screen()}`);
}

let parent = "";
let grandchild = "";
let bystander = "";
let idle = "";

beforeAll(async () => {
  // parent runs `muster spawn --wait` in its pane: its child (the grandchild) is a real descendant.
  const inner = ["spawn", "--agent", "mock", "--wait", "mock: sleep=300 tools=150\ngrandchild"];
  parent = JSON.parse((await sb.run(delegating(inner, { wait: false }))).stdout).id;
  bystander = (await sb.json(["spawn", "--agent", "mock", "mock: sleep=300 tools=150\nbystander"])).data.id;
  idle = (await sb.json(["spawn", "--agent", "mock", "a quick one"])).data.id;
  await sb.run(["wait", idle]);
  grandchild = await until(async () => {
    const ls = (await sb.json(["ls"])).data.children as { id: string; parent: string | null }[];
    return ls.find((c) => c.parent === parent)?.id;
  }, 30_000);
  const env = Object.entries({
    MUSTER_HOME: sb.home,
    MUSTER_TMUX_SOCKET: sb.socket,
    HOME: sb.env.HOME!,
    XDG_CONFIG_HOME: sb.env.XDG_CONFIG_HOME!,
    NO_COLOR: "1",
  }).map(([k, v]) => `${k}=${v}`);
  await execa(
    "tmux",
    ["-L", ui, "new-session", "-d", "-s", "top", "-x", "100", "-y", "30", "-c", sb.cwd, "--"].concat([
      "env",
      "-u",
      "TMUX",
      "-u",
      "TMUX_PANE",
      ...env,
      process.execPath,
      BIN,
      "top",
    ]),
    { stdin: "ignore" },
  );
  await tmux(["set-option", "-t", "top", "remain-on-exit", "on"]);
  // A miss says what the pane showed, so a failure on a loaded machine can be read from the log.
  await until(async () => (await screen()).includes(short(grandchild)), 30_000).catch(async (e: Error) => {
    throw new Error(`${e.message}; top's pane showed:\n${await screen()}`);
  });
}, 120_000);

afterAll(async () => {
  await killServerAndWait(ui);
});

describe("muster top in a tmux pane", () => {
  it("resizes cleanly: the same rows re-laid out for the new width, nothing wider than the pane", async () => {
    await tmux(["resize-window", "-t", "top", "-x", "60", "-y", "20"]);
    // Redrawn whole for the new size: the header without the columns that no longer fit, every row there.
    const redrawn = (f: string, wide: boolean) =>
      f.includes("NAME") &&
      f.includes("MODEL") === wide &&
      f.includes(short(grandchild)) &&
      /hidden:/.test(f);
    const narrow = (
      await until(async () => redrawn(await screen(), false) && (await screen()), 10_000)
    ).split("\n");
    for (const l of narrow) expect([...l].length).toBeLessThanOrEqual(60);
    // Nothing of the wider frame is left on screen (ink's first redraw after a resize wraps).
    expect(narrow.filter((l) => l.startsWith("muster top"))).toHaveLength(1);
    await tmux(["resize-window", "-t", "top", "-x", "100", "-y", "30"]);
    await until(async () => redrawn(await screen(), true), 10_000);
  });

  it("a shows the attach command of the selected child's pane (its own tmux server)", async () => {
    await select(parent);
    await keys("a");
    await until(async () => (await screen()).includes(`attach: tmux -L ${sb.socket} attach-session`), 10_000);
    await keys("Enter"); // collapse again
  });

  it("selects a child, captures its pane, sends it a follow-up", async () => {
    await select(idle);
    expect(await screen()).toContain("last output");
    await keys("v");
    await until(async () => (await screen()).includes(`pane of ${short(idle)}`), 10_000);
    // The capture shows what the child's pane shows: its host's rendering of the turn.
    expect(await screen()).toMatch(/completed/);
    await keys("Escape", "s");
    await until(async () => (await screen()).includes(`send to ${short(idle)}:`));
    await tmux(["send-keys", "-t", "top", "-l", "mock: reply=followed-up-from-top"]);
    await keys("Enter");
    await until(async () => (await status(idle)).turns === 2, 20_000);
    await until(async () => (await sb.run(["result", idle])).stdout.includes("followed-up-from-top"), 20_000);
  });

  it("cancels a subtree after confirmation, deepest first, and quits leaving the others running", async () => {
    await select(parent);
    await keys("X");
    await until(async () => (await screen()).includes(`cancel 2 child(ren) under ${short(parent)}`));
    await keys("y");
    await until(async () => (await status(parent)).status === "closed", 30_000);
    expect((await status(grandchild)).status).toBe("closed");
    // Settled rows leave the tree, and the footer says so.
    await until(async () => /hidden: 2 settled/.test(await screen()), 10_000);

    await keys("q");
    await until(
      async () => (await tmux(["display-message", "-p", "-t", "top", "#{pane_dead}"])).trim() === "1",
    );
    // tmux records the exit status once it has reaped the process, which may come after the pane is dead:
    // when it has one, it is 0 (top quit on its own, not by a signal or an error).
    const how = (
      await tmux(["display-message", "-p", "-t", "top", "#{pane_dead_status}:#{pane_dead_signal}"])
    ).trim();
    expect(["0:", ":"]).toContain(how);
    expect((await status(bystander)).status).toBe("running");
    expect((await status(idle)).status).toBe("idle");
    await sb.run(["cancel", bystander]);
    await sb.run(["cancel", idle]);
  });
});
