/**
 * `muster attach` on a pty child, driven by scripted clients: each viewer is the real CLI on a real
 * terminal of its own (node-pty), typing and reading as a person would. Scrollback replay, keys into the
 * pane, resize, two viewers at once, detach keys (default and configured), and the end of the child.
 */
import * as net from "node:net";
import pty from "node-pty";
import { afterAll, describe, expect, it } from "vitest";
import { FRAME, FrameReader, jsonFrame, parseJson } from "../../src/mux/pty/protocol.js";
import { BIN, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-ptya");
const onPty = { MUSTER_BACKEND: "pty" };
const viewers: Viewer[] = [];

interface Viewer {
  term: pty.IPty;
  out: () => string;
  exit: Promise<number>;
}

/** `muster attach <id>` on a terminal of `cols`×`rows`. */
function attach(id: string, cols: number, rows: number, env: NodeJS.ProcessEnv = {}): Viewer {
  const term = pty.spawn(process.execPath, [BIN, "attach", id], {
    cols,
    rows,
    cwd: sb.cwd,
    env: { ...sb.env, ...env } as Record<string, string>,
  });
  let out = "";
  term.onData((d) => {
    out += d;
  });
  const exit = new Promise<number>((resolve) => term.onExit((e) => resolve(e.exitCode)));
  // What a person reads: escape sequences (colours, cursor modes) and carriage returns left out.
  const text = () => out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "").replaceAll("\r", "");
  const v = { term, out: text, exit };
  viewers.push(v);
  return v;
}

/** The holder's own answer to a hello: the pane's current size. */
function paneSize(socket: string): Promise<{ cols: number; rows: number }> {
  return new Promise((resolve, reject) => {
    const s = net.createConnection(socket);
    const reader = new FrameReader();
    s.on("connect", () => s.write(jsonFrame(FRAME.HELLO, { role: "control" })));
    s.on("data", (c) => {
      const f = reader.push(c).find((x) => x.type === FRAME.INFO);
      if (!f) return;
      s.destroy();
      resolve(parseJson<{ cols: number; rows: number }>(f.payload) as { cols: number; rows: number });
    });
    s.on("error", reject);
  });
}

afterAll(async () => {
  // A failed step must not leave holders behind: the sandbox's cleanup would report them instead.
  await sb.run(["cancel", "--all"]);
  for (const v of viewers) {
    try {
      v.term.kill("SIGKILL");
    } catch {}
  }
});

describe("muster attach on a pty child (scripted terminals)", () => {
  it("replays the scrollback, types into the pane, follows resizes; two viewers at once; each detach key leaves the child running", async () => {
    const s = await sb.json(["spawn", "--wait", "before anyone attached"], { env: onPty });
    expect(s.exitCode).toBe(0);
    const id = s.data.spawned.id as string;
    const st = (await sb.json(["status", id])).data;
    const socket = st.pane.data.socket as string;

    // A: the scrollback first (the turn that ran before anyone looked), and the pane takes A's size.
    const a = attach(id, 100, 30);
    await until(() => a.out().includes("▶ turn 1 (inbox) before anyone attached"), 15_000);
    await until(async () => (await paneSize(socket)).cols === 100);
    expect(await paneSize(socket)).toMatchObject({ cols: 100, rows: 30 });

    // B, with its own detach key, attaches too: the newest viewer's size wins, as it also does on a resize.
    const b = attach(id, 70, 20, { MUSTER_DETACH_KEY: "^]" });
    await until(() => b.out().includes("before anyone attached"), 15_000);
    await until(async () => (await paneSize(socket)).cols === 70);
    a.term.resize(90, 25);
    await until(async () => {
      const z = await paneSize(socket);
      return z.cols === 90 && z.rows === 25;
    });

    // Keys typed at A reach the pane as a person's line; both viewers see the turn.
    a.term.write("typed at a viewer\r");
    await until(() => a.out().includes("▶ turn 2 (typed) typed at a viewer"), 15_000);
    await until(() => b.out().includes("▶ turn 2 (typed) typed at a viewer"), 15_000);
    await until(async () => (await sb.json(["status", id])).data.status === "idle", 15_000);
    expect((await sb.json(["status", id])).data.turnList[1]).toMatchObject({
      source: "typed",
      status: "completed",
    });

    // Ctrl-\ detaches A (exit 0); the child runs on and B still sees its next turn.
    a.term.write("\x1c");
    expect(await a.exit).toBe(0);
    expect(a.out()).toContain("[detached from pty-");
    expect((await sb.json(["status", id])).data.status).toBe("idle");
    const sent = await sb.run(["send", id, "while B watches", "--wait"]);
    expect(sent.exitCode).toBe(0);
    await until(() => b.out().includes("▶ turn 3 (inbox) while B watches"), 15_000);
    expect(a.out()).not.toContain("while B watches");

    // B's key is ^] (MUSTER_DETACH_KEY).
    b.term.write("\x1d");
    expect(await b.exit).toBe(0);
    expect(b.out()).toContain("[detached from pty-");
    expect((await sb.json(["status", id])).data.status).toBe("idle");

    // A viewer attached when the child ends is told so and exits; attaching to a closed child fails.
    const c = attach(id, 80, 24);
    await until(() => c.out().includes("while B watches"), 15_000);
    expect((await sb.json(["cancel", id])).exitCode).toBe(0);
    expect(await c.exit).toBe(0);
    expect(c.out()).toMatch(/\[pty-[0-9a-f]+ (exited|closed)/);
    const late = attach(id, 80, 24);
    expect(await late.exit).not.toBe(0);
    expect(late.out()).toMatch(/has exited|no longer exists|not running|closed/i);
  });
});
