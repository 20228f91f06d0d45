import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PaneRef } from "../../src/mux/backend.js";
import { createTmuxBackend } from "../../src/mux/tmux/backend.js";
import { killServerAndWait, privateSocket, waitFor } from "../helpers/tmux.js";

const socket = privateSocket("mt");
const tmux = createTmuxBackend({ MUSTER_TMUX_SOCKET: socket });
const node = process.execPath;
let dir = "";

/** Writes its argv, one env var and cwd as JSON to argv[2]. */
const DUMP = `require("fs").writeFileSync(process.argv[2], JSON.stringify({
  argv: process.argv.slice(3), env: process.env.MUSTER_T, cwd: process.cwd() }));`;
/** Raw-mode tty reader: no echo, no line discipline; writes the first argv[3] bytes to argv[2]. */
const RAW = `const fs = require("fs"); const want = Number(process.argv[3]); const chunks = []; let n = 0;
process.stdin.setRawMode(true); if (process.argv[4] === "bp") process.stdout.write("\\x1b[?2004h");
process.stdout.write("READY\\n");
process.stdin.on("data", (b) => { chunks.push(b); n += b.length;
  if (n >= want) { fs.writeFileSync(process.argv[2] + ".tmp", Buffer.concat(chunks)); fs.renameSync(process.argv[2] + ".tmp", process.argv[2]); process.exit(0); } });`;

const tm = async (...args: string[]): Promise<string> =>
  String((await execa("tmux", ["-L", socket, ...args], { stdin: "ignore" })).stdout);
// A file that exists but is still empty is being written: not there yet.
const fileOnce = (p: string) => () =>
  existsSync(p) && readFileSync(p).length > 0 ? readFileSync(p) : undefined;
const spawn = (argv: string[], name = "t") => tmux.spawn({ argv, cwd: dir, name });

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "muster-tmux-"));
  writeFileSync(join(dir, "dump.cjs"), DUMP);
  writeFileSync(join(dir, "raw.cjs"), RAW);
});

afterAll(async () => {
  await killServerAndWait(socket);
  rmSync(dir, { recursive: true, force: true });
});

describe("TmuxBackend on a private server", () => {
  it("reports the version", async () => {
    expect(await tmux.version()).toMatch(/^\d+\.\d+/);
  });

  it("spawns argv, env, cwd and name literally without stealing focus", async () => {
    const cwd = join(dir, "c #{pane_id};");
    mkdirSync(cwd);
    const out = join(dir, "argv.json");
    const args = ["a b", "$(rm -rf ~)", `it's "q"`, "`x`", "x;", "#{pane_id}", "", "-n", "\\;"];
    const first = await spawn(["sleep", "30"]); // creates the session
    const active = await tm("display-message", "-p", "-t", "=muster:", "#{window_id}");
    const ref = await tmux.spawn({
      argv: [node, join(dir, "dump.cjs"), out, ...args],
      cwd,
      env: { MUSTER_T: "v;#{x}" },
      name: "child #1;",
    });
    expect(ref).toMatchObject({ backend: "tmux", server: { flag: "-L", value: socket }, session: "muster" });
    expect(ref.paneId).toMatch(/^%\d+$/);
    expect(ref.windowId).toMatch(/^@\d+$/);
    const got = JSON.parse(String(await waitFor(fileOnce(out))));
    expect(got).toEqual({ argv: args, env: "v;#{x}", cwd });
    expect(await tm("display-message", "-p", "-t", ref.paneId, "#{window_name}")).toBe("child #1;");
    expect(await tm("display-message", "-p", "-t", "=muster:", "#{window_id}")).toBe(active);
    await tmux.kill(first);
  });

  it("24 concurrent first spawns from two processes' worth of backends share one session", async () => {
    // More spawns than tmux clients run at once per server: the queued ones reach a server that one of
    // them is starting (no session yet: "no current target"), and must wait for its session too.
    const fresh = privateSocket("mt");
    const env = { MUSTER_TMUX_SOCKET: fresh };
    const [b1, b2] = [createTmuxBackend(env), createTmuxBackend(env)];
    try {
      const opts = { argv: ["sleep", "30"], cwd: dir, name: "c" };
      const backends = Array.from({ length: 24 }, (_, i) => (i % 2 ? b2 : b1));
      const refs = await Promise.all(backends.map((b) => b.spawn(opts)));
      expect(new Set(refs.map((r) => r.paneId)).size).toBe(24);
      const windows = ["-L", fresh, "list-windows", "-a", "-F", "#{session_name}:#{window_name}"];
      const { stdout } = await execa("tmux", windows);
      expect(stdout.split("\n").sort()).toEqual([...Array(24).fill("muster:c"), "muster:muster"]);
    } finally {
      await killServerAndWait(fresh);
    }
  });

  it("a missing tmux binary is mux_unavailable, and liveness is unknown", async () => {
    const broken = createTmuxBackend({ MUSTER_TMUX_SOCKET: socket, MUSTER_TMUX_BIN: join(dir, "no-tmux") });
    await expect(broken.version()).rejects.toMatchObject({ code: "mux_unavailable" });
    const ref = await spawn(["sleep", "30"]);
    expect(await broken.alive(ref)).toBe("unknown");
    expect(await broken.aliveMany([ref])).toEqual(new Map([[ref.paneId, "unknown"]]));
  });

  it("a single argv word runs without a shell", async () => {
    const ref = await spawn([`touch ${join(dir, "pwned")}`]);
    await waitFor(async () => (await tmux.alive(ref)) === "dead");
    expect(existsSync(join(dir, "pwned"))).toBe(false);
  });

  it("rejects a missing cwd instead of letting tmux start elsewhere", async () => {
    await expect(tmux.spawn({ argv: ["true"], cwd: join(dir, "nope"), name: "x" })).rejects.toMatchObject({
      code: "invalid_argument",
    });
  });

  it("keeps an exited pane: alive → dead with exit 3 (also right after death); signalled → signal 9", async () => {
    const ref = await spawn(["sh", "-c", "sleep 0.3; exit 3"]);
    expect(await tmux.alive(ref)).toBe("alive");
    expect(await tmux.deadStatus(ref)).toBeNull();
    const quick = await Promise.all([0, 1, 2, 3].map((i) => spawn(["sh", "-c", `sleep 0.0${i}; exit 3`])));
    for (const r of [ref, ...quick]) {
      await waitFor(async () => (await tmux.alive(r)) === "dead");
      expect(await tmux.deadStatus(r)).toEqual({ exitCode: 3, signal: null });
    }
    const killed = await spawn(["sh", "-c", "kill -9 $$"]);
    await waitFor(async () => (await tmux.alive(killed)) === "dead");
    expect(await tmux.deadStatus(killed)).toEqual({ exitCode: null, signal: 9 });
  });

  it("a new window is one command: a command that exits at once keeps its pane, status, name and title", async () => {
    const ref = await tmux.spawn({
      argv: ["sh", "-c", "exit 4"],
      cwd: dir,
      name: "gone #1;",
      title: "t #2",
      start: "immediate",
    });
    await waitFor(async () => (await tmux.alive(ref)) === "dead");
    expect(await tmux.deadStatus(ref)).toEqual({ exitCode: 4, signal: null });
    const shown = await tm("display-message", "-p", "-t", ref.paneId, "#{window_name}|#{pane_title}");
    expect(shown).toBe("gone #1;|t #2");
    // No window is left under its mark.
    expect(await tm("list-windows", "-a", "-F", "#{window_name}")).not.toMatch(/muster-new-/);
    await tmux.kill(ref);
  });

  it("a killed pane is dead; killing again is fine", async () => {
    const ref = await spawn(["sleep", "30"]);
    await tmux.kill(ref);
    expect(await tmux.alive(ref)).toBe("dead");
    expect(await tmux.deadStatus(ref)).toBeNull();
    await tmux.kill(ref);
  });

  it("a pane on a server that does not exist is dead, and nothing starts that server", async () => {
    const none = privateSocket("none");
    const server = { flag: "-L", value: none } as const;
    const ref: PaneRef = { backend: "tmux", server, session: "m", paneId: "%1", windowId: "@1" };
    expect(await tmux.alive(ref)).toBe("dead");
    expect(await tmux.aliveMany([ref])).toEqual(new Map([["%1", "dead"]]));
    await tmux.kill(ref);
    expect(await execa("tmux", ["-L", none, "ls"], { reject: false }).then((r) => r.exitCode)).not.toBe(0);
  });

  it("aliveMany: one list-panes for alive, exited and killed panes", async () => {
    const [a, b, c] = await Promise.all(
      [
        ["sleep", "30"],
        ["true", "x"],
        ["sleep", "30"],
      ].map((v) => spawn(v)),
    );
    await tmux.kill(c!);
    await waitFor(async () => (await tmux.alive(b!)) === "dead");
    const m = await tmux.aliveMany([a!, b!, c!]);
    expect([m.get(a!.paneId), m.get(b!.paneId), m.get(c!.paneId)]).toEqual(["alive", "dead", "dead"]);
  });

  it("send: 64 KiB / 2,000 lines arrive byte-exact in a raw-mode tty; Enter is CR", async () => {
    const pieces = [`"dq"`, `'sq'`, "`bt`", "$(rm -rf ~)", "a\tb", "\x1b[2J", "é ü", "\x03\x04\r\x7f"];
    const line = (i: number) => `${i} ${pieces[i % pieces.length]} ${"-".repeat(i % 37)}`;
    const lines = Array.from({ length: 2000 }, (_, i) => line(i));
    lines[1999] += "=".repeat(65536 - Buffer.byteLength(lines.join("\n")));
    const text = Buffer.from(lines.join("\n"));
    expect(text.length).toBe(65536);
    const out = join(dir, "raw.bin");
    const ref = await spawn([node, join(dir, "raw.cjs"), out, String(text.length + 1)]);
    await waitFor(async () => (await tmux.capture(ref)).includes("READY"));
    await tmux.send(ref, text.toString(), { enter: true });
    const got = await waitFor(fileOnce(out));
    expect(got.equals(Buffer.concat([text, Buffer.from("\r")]))).toBe(true);
  });

  it("send: bracketed paste only when the app asked for it (\\e[?2004h)", async () => {
    const out = join(dir, "bp.bin");
    const ref = await spawn([node, join(dir, "raw.cjs"), out, "16", "bp"]);
    await waitFor(async () => (await tmux.capture(ref)).includes("READY"));
    await tmux.send(ref, "a\nb", { enter: true });
    expect((await waitFor(fileOnce(out))).toString()).toBe("\x1b[200~a\nb\x1b[201~\r");
  });

  it("send into a cooked tty: pasted LF ends a line, Enter (CR) becomes LF", async () => {
    const out = join(dir, "cooked.txt");
    const ref = await spawn(["sh", "-c", `head -n 3 > '${out}'`]);
    await tmux.send(ref, `one\t"q" $(x) \`y\`\ntwo`, { enter: true });
    await tmux.send(ref, "three", { enter: true });
    await waitFor(async () => (await tmux.alive(ref)) === "dead");
    expect(readFileSync(out, "utf8")).toBe(`one\t"q" $(x) \`y\`\ntwo\nthree\n`);
  });

  it("send to a dead pane fails cleanly and the server survives (tmux 3.3a crashes otherwise)", async () => {
    const ref = await spawn(["true", "x"]);
    await waitFor(async () => (await tmux.alive(ref)) === "dead");
    await expect(tmux.send(ref, "hello")).rejects.toMatchObject({ code: "not_running" });
    expect(await tm("list-buffers")).toBe("");
    const gone = { ...ref, paneId: "%99999" };
    await expect(tmux.send(gone, "hello", { enter: true })).rejects.toMatchObject({ code: "not_running" });
    expect(await tm("list-buffers")).toBe("");
    expect(await tmux.version()).toBeTruthy();
    expect(await tmux.alive(ref)).toBe("dead");
  });

  it("capture returns the pane's text and respects lines", async () => {
    const ref = await spawn(["sh", "-c", "seq 1 300; sleep 30"]);
    await waitFor(async () => (await tmux.capture(ref, { lines: 1 })) === "300");
    expect((await tmux.capture(ref, { lines: 10 })).split("\n")).toEqual(
      Array.from({ length: 10 }, (_, i) => String(291 + i)),
    );
    const all = (await tmux.capture(ref)).split("\n");
    expect([all.length, all[0], all.at(-1)]).toEqual([200, "101", "300"]);
    await tmux.kill(ref);
    await expect(tmux.capture(ref)).rejects.toMatchObject({ code: "not_running" });
  });

  it("attachCommand chains select-window/select-pane with ; words; focus needs tmux", async () => {
    const ref = await spawn(["sleep", "30"]);
    expect(tmux.attachCommand(ref)).toEqual([
      ...["tmux", "-L", socket, "attach-session", "-t", "muster"],
      ...[";", "select-window", "-t", ref.paneId, ";", "select-pane", "-t", ref.paneId],
    ]);
    await expect(tmux.focus(ref)).rejects.toMatchObject({ code: "unsupported" });
  });

  it.skipIf(process.platform !== "linux")(
    "inside tmux: caller's session, split, focus via an attached client",
    async () => {
      const other = await spawn(["sleep", "30"]);
      const path = await tm("display-message", "-p", "-t", "=muster:", "#{socket_path}");
      const pid = await tm("display-message", "-p", "-t", "=muster:", "#{pid}");
      await tm("new-session", "-d", "-s", "caller", "-x", "200", "-y", "50", "--", "cat", "-");
      const [callerPane, callerWindow] = (
        await tm("display-message", "-p", "-t", "=caller:", "#{pane_id} #{window_id}")
      ).split(" ");
      const inside = createTmuxBackend({ TMUX: `${path},${pid},0`, TMUX_PANE: callerPane });
      const w = await inside.spawn({ argv: ["sleep", "30"], cwd: dir, name: "w" });
      expect(w).toMatchObject({ server: { flag: "-S", value: path }, session: "caller" });
      const s = await inside.spawn({ argv: ["sleep", "30"], cwd: dir, name: "s", placement: "split" });
      expect(s.windowId).toBe(callerWindow);
      expect(await tm("display-message", "-p", "-t", "=caller:", "#{pane_id}")).toBe(callerPane);
      // A real client on the caller's session, through a pty from script(1).
      const cmd = `tmux -L ${socket} attach-session -t =caller`;
      const client = execa("script", ["-qfc", cmd, "/dev/null"], { reject: false, env: { TERM: "xterm" } });
      const where = () => tm("list-clients", "-F", "#{client_session} #{pane_id}");
      try {
        await waitFor(async () => (await where()).startsWith("caller "));
        await inside.focus(w);
        expect(await where()).toBe(`caller ${w.paneId}`);
        await inside.focus(other);
        expect(await where()).toBe(`muster ${other.paneId}`);
      } finally {
        // Detaching ends script(1) at once; SIGTERM makes it linger ~2 s.
        for (const c of (await tm("list-clients", "-F", "#{client_name}")).split("\n").filter(Boolean)) {
          await tm("detach-client", "-t", c);
        }
        if ((await Promise.race([client, new Promise((r) => setTimeout(r, 1_000, "late"))])) === "late")
          client.kill();
        await client;
      }
    },
  );
});
