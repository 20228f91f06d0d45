/**
 * The pty backend on its own: a holder process per pane (node-pty) behind a Unix socket. Real programs in
 * real pseudo-terminals; every pane a test opens is killed, and the file checks that no holder is left.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OtherPaneRef } from "../../src/mux/backend.js";
import { createPtyBackend, type PtyPaneData } from "../../src/mux/pty/backend.js";
import { encodeFrame, FRAME } from "../../src/mux/pty/protocol.js";
import { pidAlive, processesMentioning, sleep, until } from "../helpers/cli.js";

type Ref = OtherPaneRef & { data: PtyPaneData };

const node = process.execPath;
let dir = "";
let pty: ReturnType<typeof createPtyBackend>;
const opened: Ref[] = [];

/** Writes its argv, one env var, cwd, whether stdin is a terminal, its size and TERM as JSON to argv[2]. */
const DUMP = `const o = process.stdout; require("fs").writeFileSync(process.argv[2] + ".tmp", JSON.stringify({
  argv: process.argv.slice(3), env: process.env.MUSTER_T, cwd: process.cwd(), tty: process.stdin.isTTY === true,
  size: [o.columns, o.rows], term: process.env.TERM, tmux: process.env.TMUX ?? null }));
require("fs").renameSync(process.argv[2] + ".tmp", process.argv[2]); setTimeout(() => {}, 30000);`;
/** Raw-mode tty reader: writes the first argv[3] bytes it reads to argv[2]; "bp" asks for bracketed paste. */
const RAW = `const fs = require("fs"); const want = Number(process.argv[3]); const chunks = []; let n = 0;
process.stdin.setRawMode(true); if (process.argv[4] === "bp") process.stdout.write("\\x1b[?2004h");
process.stdout.write("READY\\n");
process.stdin.on("data", (b) => { chunks.push(b); n += b.length;
  if (n >= want) { fs.writeFileSync(process.argv[2] + ".tmp", Buffer.concat(chunks)); fs.renameSync(process.argv[2] + ".tmp", process.argv[2]); process.exit(0); } });`;
/** Draws like a TUI: overwrites with CR, moves the cursor, clears a line; then waits. */
const DRAW = `process.stdout.write("progress 10%\\rprogress 99%\\n" + "x".repeat(300) + "\\n" +
  "keep\\x1b[2K\\rreplaced\\n\\x1b[31mred\\x1b[0m plain\\nDONE\\n"); setTimeout(() => {}, 30000);`;

const fileOnce = (p: string) => () =>
  existsSync(p) && readFileSync(p).length > 0 ? readFileSync(p) : undefined;
async function spawn(
  argv: string[],
  extra: { env?: Record<string, string>; b?: typeof pty } = {},
): Promise<Ref> {
  const ref = (await (extra.b ?? pty).spawn({
    argv,
    cwd: dir,
    name: "t",
    ...(extra.env ? { env: extra.env } : {}),
  })) as Ref;
  opened.push(ref);
  return ref;
}
const holders = () => processesMentioning(join(dir, "state"));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "mt-ptyb-"));
  writeFileSync(join(dir, "dump.cjs"), DUMP);
  writeFileSync(join(dir, "raw.cjs"), RAW);
  writeFileSync(join(dir, "draw.cjs"), DRAW);
  pty = createPtyBackend({
    env: { PATH: process.env.PATH, TMUX: "/tmp/x,1,0" },
    stateDir: join(dir, "state"),
  });
});

afterAll(async () => {
  for (const r of opened) await pty.kill(r).catch(() => undefined);
  pty.close();
  await until(() => holders().length === 0, 5000).catch(() => undefined);
  const left = holders();
  for (const p of left) process.kill(p.pid, "SIGKILL");
  rmSync(dir, { recursive: true, force: true });
  expect(left.map((p) => p.cmdline)).toEqual([]);
});

describe("the pty backend: a holder process per pane, no multiplexer", () => {
  it("reports node-pty's version, and starts a spare holder that the next spawn takes", async () => {
    expect(await pty.version()).toMatch(/^node-pty \d+\.\d+/);
    const spare = await until(() => holders()[0]);
    const ref = await spawn(["sleep", "30"]);
    expect(ref.data.pid).toBe(spare.pid);
    // No new spare after a first spawn (past the replenish delay; the program's fork has exec'd by then).
    await sleep(600);
    expect(holders().map((p) => p.pid)).toEqual([spare.pid]);
    await pty.kill(ref);
  });

  it("a spare dies with its starter: stdin closes, it leaves and removes its folder", async () => {
    const state = join(dir, "state-starter");
    const script = join(dir, "starter.mjs");
    const backend = join(import.meta.dirname, "..", "..", "dist", "mux", "pty", "backend.js");
    writeFileSync(
      script,
      `const { createPtyBackend } = await import(${JSON.stringify(backend)});
       await createPtyBackend({ env: {}, stateDir: ${JSON.stringify(state)} }).version();
       console.log("started");`,
    );
    const { execa } = await import("execa");
    // The starter exits at once: nothing of the spare keeps it alive.
    const r = await execa(node, [script], { timeout: 10_000 });
    expect(r.stdout).toBe("started");
    await until(() => processesMentioning(state).length === 0, 10_000);
    await until(() => !existsSync(state) || readdirSync(state).length === 0, 5000);
  });

  it("a spare killed while it waited: the spawn starts a fresh holder", async () => {
    const b = createPtyBackend({ env: { PATH: process.env.PATH }, stateDir: join(dir, "state", "k") });
    await b.version();
    const spare = await until(() => processesMentioning(join(dir, "state", "k"))[0]);
    process.kill(spare.pid, "SIGKILL");
    await until(() => !pidAlive(spare.pid));
    const ref = (await b.spawn({ argv: ["sh", "-c", "echo fresh; sleep 30"], cwd: dir, name: "t" })) as Ref;
    expect(ref.data.pid).not.toBe(spare.pid);
    // The dead spare's folder (the last word of its command line) went with it.
    expect(existsSync(spare.cmdline.split(" ").pop() as string)).toBe(false);
    expect(await until(async () => ((await b.capture(ref)) === "fresh" ? "ok" : undefined))).toBe("ok");
    await b.kill(ref);
  });

  it("runs argv literally in cwd with env, on a terminal of its own (not the caller's tmux)", async () => {
    const out = join(dir, "argv.json");
    const args = ["a b", "$(rm -rf ~)", `it's "q"`, "", "-n", "\\;"];
    const ref = await spawn([node, join(dir, "dump.cjs"), out, ...args], { env: { MUSTER_T: "v;#{x}" } });
    expect(ref).toMatchObject({ backend: "pty", id: expect.stringMatching(/^pty-[0-9a-f]{12}$/) });
    const got = JSON.parse(String(await until(fileOnce(out))));
    expect(got).toEqual({
      argv: args,
      env: "v;#{x}",
      cwd: dir,
      tty: true,
      size: [120, 40],
      term: "xterm-256color",
      tmux: null,
    });
    expect(await pty.alive(ref)).toBe("alive");
    // The socket and the pane's folder are the user's alone.
    expect(statSync(ref.data.socket).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "state", ref.id)).mode & 0o777).toBe(0o700);
    // The environment (it may hold secrets) went over the holder's stdin: no file and no argv has it.
    const paneDir = join(dir, "state", ref.id);
    for (const f of readdirSync(paneDir).filter((f) => f !== "sock"))
      expect(readFileSync(join(paneDir, f), "utf8")).not.toContain("v;#{x}");
    expect(readFileSync(`/proc/${ref.data.pid}/cmdline`, "utf8")).not.toContain("v;#{x}");
  });

  it("rejects a missing cwd or an empty argv and leaves nothing behind", async () => {
    await expect(pty.spawn({ argv: ["true"], cwd: join(dir, "nope"), name: "x" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
    await expect(pty.spawn({ argv: [], cwd: dir, name: "x" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });

  it("capture renders the screen as a terminal shows it (CR overwrites, clears, colours), wrapped lines joined", async () => {
    const ref = await spawn([node, join(dir, "draw.cjs")]);
    const text = await until(async () => {
      const t = await pty.capture(ref);
      return t.includes("DONE") ? t : undefined;
    });
    expect(text.split("\n")).toEqual(["progress 99%", "x".repeat(300), "replaced", "red plain", "DONE"]);
    expect(await pty.capture(ref, { lines: 2 })).toBe("red plain\nDONE");
  });

  it("an exited pane is dead with its exit status, and its last screen can still be captured", async () => {
    const ref = await spawn(["sh", "-c", "echo last words; exit 3"]);
    await until(async () => (await pty.alive(ref)) === "dead");
    expect(await pty.deadStatus(ref)).toEqual({ exitCode: 3, signal: null });
    expect(await pty.capture(ref)).toBe("last words");
    const killed = await spawn(["sh", "-c", "kill -9 $$"]);
    await until(async () => (await pty.alive(killed)) === "dead");
    expect(await pty.deadStatus(killed)).toEqual({ exitCode: null, signal: 9 });
    expect(await pty.aliveMany([ref, killed])).toEqual(
      new Map([
        [ref.id, "dead"],
        [killed.id, "dead"],
      ]),
    );
    await expect(pty.send(ref, "x", { enter: true })).rejects.toMatchObject({ code: "not_running" });
  });

  it("send types bytes intact, Enter as CR; bracketed paste only when the program asked", async () => {
    const text = "line1\nline2 ; $(x) \u00e9 \ttab";
    const plain = join(dir, "plain.bin");
    const a = await spawn([node, join(dir, "raw.cjs"), plain, String(Buffer.byteLength(text) + 1)]);
    await until(async () => (await pty.capture(a)).includes("READY"));
    await pty.send(a, text, { enter: true });
    expect(Buffer.from(await until(fileOnce(plain))).toString()).toBe(`${text}\r`);

    const bp = join(dir, "bp.bin");
    const b = await spawn([node, join(dir, "raw.cjs"), bp, String(Buffer.byteLength(text) + 12), "bp"]);
    await until(async () => (await pty.capture(b)).includes("READY"));
    await pty.send(b, text);
    expect(Buffer.from(await until(fileOnce(bp))).toString()).toBe(`\x1b[200~${text}\x1b[201~`);
  });

  it("kill hangs the program up, ends the holder and removes the pane's folder", async () => {
    const ref = await spawn([
      "sh",
      "-c",
      "trap 'echo hup > hup.txt; exit 0' HUP; echo armed; while :; do sleep 0.1; done",
    ]);
    await until(async () => (await pty.capture(ref)) === "armed");
    await pty.kill(ref);
    expect(await pty.alive(ref)).toBe("dead");
    expect(pidAlive(ref.data.pid)).toBe(false);
    await until(() => !pidAlive(ref.data.childPid), 5000);
    expect(readFileSync(join(dir, "hup.txt"), "utf8").trim()).toBe("hup");
    expect(existsSync(join(dir, "state", ref.id))).toBe(false);
    await expect(pty.capture(ref)).rejects.toMatchObject({ code: "not_running" });
    await pty.kill(ref); // already gone: not an error
  });

  it("a holder killed with SIGKILL: the pane is dead and its program is hung up", async () => {
    const ref = await spawn(["sleep", "30"]);
    process.kill(ref.data.pid, "SIGKILL");
    await until(async () => (await pty.alive(ref)) === "dead", 5000);
    await until(() => !pidAlive(ref.data.childPid), 5000);
    expect(await pty.deadStatus(ref)).toBeNull(); // nobody recorded how it ended
  });

  it("a socket path over sun_path's 108 bytes goes to the runtime dir (0700), still 0600", async () => {
    const deep = join(dir, "d".repeat(60), "e".repeat(60));
    const runtime = join(dir, "run");
    mkdirSync(runtime, { mode: 0o700 });
    const b = createPtyBackend({ env: { PATH: process.env.PATH, XDG_RUNTIME_DIR: runtime }, stateDir: deep });
    const ref = (await b.spawn({ argv: ["sh", "-c", "echo far; sleep 30"], cwd: dir, name: "t" })) as Ref;
    try {
      expect(ref.data.socket.startsWith(join(runtime, "muster-pty-"))).toBe(true);
      expect(Buffer.byteLength(ref.data.socket)).toBeLessThanOrEqual(107);
      expect(statSync(join(ref.data.socket, "..")).mode & 0o777).toBe(0o700);
      expect(statSync(ref.data.socket).mode & 0o777).toBe(0o600);
      expect(await until(async () => ((await b.capture(ref)) === "far" ? "far" : undefined))).toBe("far");
    } finally {
      await b.kill(ref);
    }
    expect(existsSync(ref.data.socket)).toBe(false);
  });

  it("focus needs a multiplexer; attach runs the pty client; split is not possible", async () => {
    const ref = await spawn(["sleep", "30"]);
    await expect(pty.focus(ref)).rejects.toMatchObject({
      code: "unsupported",
      message: expect.stringMatching(/focus needs a multiplexer/),
    });
    expect(pty.attachCommand(ref)).toEqual([
      node,
      expect.stringMatching(/dist\/mux\/pty\/attach\.js$/),
      ref.data.socket,
      ref.id,
      String(ref.data.pid),
    ]);
    expect(pty.placementNote("split")).toMatch(/no screen to split/);
    expect(pty.placementNote("window")).toBeUndefined();
    await pty.kill(ref);
  });

  it("a socket that is not the holder's (a link to another listener, another process) is refused", async () => {
    const ref = await spawn(["sleep", "30"]);
    // Another listener that greets like a holder: it must never be sent a request.
    const other = join(dir, "other.sock");
    const requests: string[] = [];
    const server = createServer((sock) =>
      sock.on("data", (b) => {
        requests.push(b.toString("latin1"));
        sock.write(encodeFrame(FRAME.INFO, Buffer.from(JSON.stringify({ pid: 4242 }))));
      }),
    );
    await new Promise<void>((r) => server.listen(other, r));
    const real = `${ref.data.socket}.real`;
    try {
      renameSync(ref.data.socket, real);
      symlinkSync(other, ref.data.socket);
      await expect(pty.capture(ref)).rejects.toThrow(/is a symbolic link.*refused/);
      await expect(pty.send(ref, "x")).rejects.toThrow(/is a symbolic link.*refused/);
      const attach = await execa(pty.attachCommand(ref)[0]!, pty.attachCommand(ref).slice(1), {
        reject: false,
      });
      expect(attach.exitCode).toBe(1);
      expect(attach.stderr).toMatch(/is a symbolic link.*refused/);
      expect(requests).toEqual([]);
      // The right kind of file, the wrong process behind it: the greeting's pid gives it away.
      rmSync(ref.data.socket);
      renameSync(other, ref.data.socket);
      await expect(pty.capture(ref)).rejects.toThrow(/is open to other users.*refused/);
      chmodSync(ref.data.socket, 0o600);
      await expect(pty.capture(ref)).rejects.toThrow(/pid 4242\) is not its holder.*refused/);
      expect(requests.map((r) => r.includes("control"))).toEqual([true]);
    } finally {
      await new Promise((r) => server.close(r));
      rmSync(ref.data.socket, { force: true });
      renameSync(real, ref.data.socket);
    }
    expect(await pty.capture(ref)).toBe("");
    await pty.kill(ref);
  });

  it("a record whose pane id would walk out of the state dir is refused", async () => {
    const bad = { backend: "pty", id: "../../etc", data: { pid: 1, childPid: 1, socket: "/tmp/x" } };
    await expect(pty.kill(bad)).rejects.toMatchObject({ code: "invalid_id" });
  });
});
