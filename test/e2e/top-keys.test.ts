/**
 * `muster top` keys and redraws as a first-time user meets them: the built CLI in a pane of its own private
 * tmux server, keys sent with send-keys (several in one call arrive in one read), the screen read with
 * capture-pane. The children run on the sandbox's private server.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait, privateSocket } from "../helpers/tmux.js";

const sb = useSandbox("mt-topkeys");
const ui = privateSocket("mt-topkeys-ui");
const tmux = async (args: string[]) =>
  String((await execa("tmux", ["-L", ui, ...args], { reject: false, stdin: "ignore" })).stdout);
/** The screen as text, and with its styles (the selected row is drawn inverse). */
const screen = (s = "top") => tmux(["capture-pane", "-p", "-t", s]);
const styled = () => tmux(["capture-pane", "-p", "-e", "-t", "top"]);
/** Each argument is one send-keys call (one write to the pane); an array is several keys in one call. */
const keys = async (...k: (string | string[])[]) => {
  for (const key of k) {
    await tmux(["send-keys", "-t", "top", ...(Array.isArray(key) ? key : [key])]);
    await new Promise((r) => setTimeout(r, 150));
  }
};
const short = (id: string) => id.slice(-8);
const status = async (id: string) => (await sb.json(["status", id])).data;
/** The short id on the inverse (selected) row, if any row is selected. */
const selectedShort = async () =>
  /\x1b\[(?:\d+;)*7m([^\n]*)/.exec(await styled())?.[1]?.match(/[0-9a-f]{8}/)?.[0] ?? null;
/** Moves the selection (j/k, one key a read) until `id`'s row is the selected one. */
async function select(id: string): Promise<void> {
  for (let i = 0; i < 12; i++) {
    if ((await selectedShort()) === short(id)) return;
    await keys(i < 6 ? "k" : "j");
  }
  const at = await selectedShort();
  if (at === short(id)) return;
  throw new Error(`could not select ${id} (selected: ${at}):\n${await screen()}`);
}

const env = () =>
  Object.entries({
    MUSTER_HOME: sb.home,
    MUSTER_TMUX_SOCKET: sb.socket,
    HOME: sb.env.HOME!,
    XDG_CONFIG_HOME: sb.env.XDG_CONFIG_HOME!,
    NO_COLOR: "1",
  }).map(([k, v]) => `${k}=${v}`);
const topArgv = () => ["env", "-u", "TMUX", "-u", "TMUX_PANE", ...env(), process.execPath, BIN, "top"];
/** A session running top in a pane of `cols`×`rows`; `before` (argv) runs first, in the same pane. */
async function openTop(session: string, cols: number, rows: number, before: string[] = []) {
  const size = ["-x", String(cols), "-y", String(rows)];
  await execa(
    "tmux",
    ["-L", ui, "new-session", "-d", "-s", session, ...size, "-c", sb.cwd, "--"].concat(
      before.length > 0 ? [...before, ...topArgv()] : topArgv(),
    ),
    { stdin: "ignore" },
  );
  await tmux(["set-option", "-t", session, "remain-on-exit", "on"]);
}

/**
 * Resizes top's window and waits until the frame is drawn whole for the new size: every row there, one
 * title (nothing left of the old frame), and nothing wider than the pane.
 */
async function resizeTo(x: number, y: number, session = "top"): Promise<void> {
  await tmux(["resize-window", "-t", session, "-x", String(x), "-y", String(y)]);
  await until(async () => drawnFor(x, await joined(session)), 10_000).catch(async (e: Error) => {
    throw new Error(`${e.message}; after the resize to ${x}×${y} the pane showed:\n${await screen(session)}`);
  });
}
/** The screen with wrapped lines joined: a frame laid out wider than the pane shows as a longer line. */
const joined = (s: string) => tmux(["capture-pane", "-p", "-J", "-t", s]);
const drawnFor = (x: number, s: string) =>
  s.includes("NAME") &&
  /hidden:/.test(s) &&
  s.split("\n").filter((l) => l.startsWith("muster top")).length === 1 &&
  s.split("\n").every((l) => [...l.trimEnd()].length <= x);

let first = "";
let second = "";
let third = "";

beforeAll(async () => {
  // Idle children only: nothing on screen moves with the clock, so only top's own redraws change it.
  for (const task of ["first", "second", "third"]) {
    const id = (await sb.json(["spawn", "--agent", "mock", `a quick one: ${task}`])).data.id;
    await sb.run(["wait", id]);
    if (task === "first") first = id;
    else if (task === "second") second = id;
    else third = id;
  }
  await openTop("top", 100, 30);
  await until(async () => (await screen()).includes(short(third)), 30_000).catch(async (e: Error) => {
    throw new Error(`${e.message}; top's pane showed:\n${await screen()}`);
  });
}, 120_000);

// A test that fails part-way leaves no other size behind for the next.
afterEach(async () => {
  await resizeTo(100, 30);
});

afterAll(async () => {
  await killServerAndWait(ui);
});

describe("muster top keys in a tmux pane", () => {
  it("redraws on a resize without a key: 100×30 → 80×24 → 120×30", async () => {
    for (const [x, y] of [
      [80, 24],
      [120, 30],
      [100, 30],
    ] as const)
      await resizeTo(x, y);
  });

  it("the key help fits at 100 and 80 columns, and stays after an action's message", async () => {
    for (const x of [100, 80]) {
      await resizeTo(x, 30);
      await keys("r");
      const s = await until(async () => {
        const t = await screen();
        // A frame drawn for this width: one drawn before top saw the resize wraps its header ("ACTIV" / "ITY").
        const fits = t.split("\n").some((l) => l.trimEnd().endsWith("ACTIVITY"));
        return fits && t.includes("refreshed") && t.includes("q quit") && t;
      }, 10_000).catch(async (e: Error) => {
        throw new Error(`${e.message}; at ${x} columns the pane showed:\n${await screen()}`);
      });
      // The help is the last lines, whole: the message has a line of its own above it.
      const lines = s.trimEnd().split("\n");
      const help = lines.slice(lines.indexOf("refreshed") + 1);
      expect(help.length).toBeLessThanOrEqual(2);
      for (const k of ["↑↓ select", "v pane", "x cancel", "X subtree", "/ filter", "H settled", "q quit"])
        expect(help.join("\n")).toContain(k);
      for (const l of help) expect(l).not.toMatch(/…\s*$/);
    }
  });

  it("a frame repaints the whole screen: what else was written to the terminal does not stay", async () => {
    // Written straight to the pane's terminal, below top's last frame: ink's own erase of that frame
    // would start from the wrong row and leave the frame's first rows above the next one.
    const tty = (await tmux(["display-message", "-p", "-t", "top", "#{pane_tty}"])).trim();
    // The resize after the test before leaves one more frame due (top clears and redraws 150 ms after a
    // resize): on a loaded machine it can wipe the stray output before the pane is read, so it is written
    // again then, until it is seen on the screen.
    let shown = false;
    for (let attempt = 0; attempt < 5 && !shown; attempt++) {
      fs.appendFileSync(tty, "stray output\n\n\n");
      shown = await until(async () => (await screen()).includes("stray output"), 2000).then(
        () => true,
        () => false,
      );
    }
    expect(shown).toBe(true);
    await keys("r");
    await until(async () => {
      const s = await joined("top");
      return s.includes("refreshed") && !s.includes("stray output") && drawnFor(100, s);
    }, 10_000).catch(async (e: Error) => {
      throw new Error(`${e.message}; the pane showed:\n${await screen()}`);
    });
  });

  it("an expanded child's paths are cut in the middle: its id at their end stays in view", async () => {
    await resizeTo(60, 30);
    await select(second);
    await keys("Enter");
    const s = await until(async () => {
      const t = await screen();
      return /^ {4}artifacts /m.test(t) && t;
    }, 10_000);
    const line = (label: string) => s.split("\n").find((l) => l.startsWith(`    ${label}`)) ?? "";
    expect(line("artifacts")).toMatch(new RegExp(`${second}\\s*$`));
    expect(line("artifacts")).toContain("…");
    expect(line("session")).toContain(second);
    await keys("Enter");
    await until(async () => !/^ {4}artifacts /m.test(await screen()));
  });

  it("two Backspaces in one read erase two characters; the prompt holds only what the screen showed", async () => {
    await select(first);
    await keys("s");
    await until(async () => (await screen()).includes(`send to ${short(first)}:`));
    await tmux(["send-keys", "-t", "top", "-l", "abcd"]);
    await until(async () => (await screen()).includes(`send to ${short(first)}: abcd`));
    await keys(["BSpace", "BSpace"]);
    await until(async () => /send to [0-9a-f]{8}: ab▏/.test(await screen()), 5_000).catch(
      async (e: Error) => {
        throw new Error(`${e.message}; the pane showed:\n${await screen()}`);
      },
    );
    await keys("Enter");
    await until(async () => (await status(first)).turns === 2, 20_000);
    await until(async () => /prompt-bytes: \d+/.test((await sb.run(["result", first])).stdout), 20_000);
    const answer = (await sb.run(["result", first])).stdout;
    expect(answer).toContain("prompt-bytes: 2");
    expect(answer).toContain("Task: ab");
  });

  it("x asks before cancelling a live child; n keeps it, y cancels it", async () => {
    await until(async () => (await status(first)).status === "idle", 20_000);
    await select(second);
    await keys("x");
    await until(async () => new RegExp(`cancel ${short(second)}.*\\? y/N`).test(await screen()));
    await keys("n");
    await until(async () => (await screen()).includes("cancel aborted"));
    expect((await status(second)).status).toBe("idle");
    await keys("x");
    await until(async () => /\? y\/N/.test(await screen()));
    await keys("y");
    await until(async () => (await status(second)).status === "closed", 20_000);
    await until(async () => (await screen()).includes(`cancelled ${short(second)}`));
  });

  it("when the selected child settles and leaves the tree, no other child is selected in its place", async () => {
    const rowShown = async (id: string) => (await screen()).split("\n").some((l) => l.startsWith(short(id)));
    await select(third);
    await sb.run(["cancel", third]);
    // Settled: hidden (the footer counts it), and nothing else took over its selection.
    await until(async () => !(await rowShown(third)), 10_000);
    expect(await selectedShort()).toBeNull();
    await keys("x");
    await until(async () => (await screen()).includes("select a child first"));
    await new Promise((r) => setTimeout(r, 300));
    expect((await status(first)).status).toBe("idle");
    // j selects again, from where the vanished row was: the last row now.
    await keys("j");
    const last = (await screen())
      .split("\n")
      .filter((l) => /^[0-9a-f]{8} /.test(l))
      .at(-1)
      ?.slice(0, 8);
    await until(async () => (await selectedShort()) === last);
  });

  it("keys typed before top's first frame are applied once it is drawn", async () => {
    // top starts only once the gate opens: the keys wait in the terminal, as keys typed while it loads do.
    const gate = path.join(sb.cwd, "top-gate");
    expect(spawnSync("mkfifo", [gate]).status).toBe(0);
    await openTop("early", 100, 30, ["sh", "-c", 'read _ < "$0"; exec "$@"', gate]);
    await tmux(["send-keys", "-t", "early", "H"]);
    await tmux(["send-keys", "-t", "early", "j", "Enter"]);
    fs.writeFileSync(gate, "go\n");
    // H showed the settled children; j selected the second row; Enter expanded it.
    const s = await until(async () => {
      const t = await screen("early");
      return /^ {4}id [0-9a-f-]{36}/m.test(t) && t;
    }, 20_000).catch(async (e: Error) => {
      throw new Error(`${e.message}; the early pane showed:\n${await screen("early")}`);
    });
    expect(s).toContain("showing settled");
    expect(/^ {4}id ([0-9a-f-]{36})/m.exec(s)?.[1]).toBe(second);
  });
});
