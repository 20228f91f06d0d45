/**
 * The pty holder: one small detached process per pane of the pty backend. It runs the pane's program
 * under a pseudo-terminal (node-pty), keeps its output (a byte ring for replay, and a headless terminal
 * model for capture), and serves a Unix socket (0600) for viewers (`muster attach`) and muster's own calls
 * (send, capture). When the program ends it leaves `exit.json` and `screen.txt` in its folder (what tmux's
 * remain-on-exit keeps) and exits, so nothing lingers. Run as `node holder.cjs <folder>`; what to run
 * (argv, cwd, env, size, socket path) comes as one JSON line on stdin, so the env (which may hold secrets)
 * is never on disk. A holder may be started before muster knows what it will run (a spare, so a spawn
 * does not wait for Node to start): it waits for that line, and leaves (removing its folder) when stdin
 * closes first (its starter exited) or after SPARE_IDLE_MS.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import * as pty from "node-pty";
import {
  clampSize,
  encodeFrame,
  FRAME,
  type Frame,
  FrameReader,
  type Hello,
  jsonFrame,
  parseJson,
} from "./protocol.js";
import type { Screen } from "./screen.js";

export interface HolderSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  socket: string;
}

/** Output kept for a viewer that attaches later: about 10,000 lines of a busy agent. */
const REPLAY_MAX_BYTES = 1024 * 1024;
/** A viewer that reads this far behind is dropped rather than let the holder's memory grow. */
const VIEWER_BACKLOG_MAX = 8 * 1024 * 1024;
/** After SIGHUP, how long the program has to exit before its process group is killed. */
const HANGUP_GRACE_MS = 2000;

/** How often a holder looks for its folder (a state root deleted under it leaves it unreachable). */
const ORPHAN_CHECK_MS = 5000;

/** A spare nobody used in this long is not worth its memory: it leaves. */
const SPARE_IDLE_MS = 60_000;

const dir = process.argv[2] ?? "";

/** Waits for the spec line on stdin; a closed stdin or the idle limit ends a spare that was never used. */
function awaitSpec(): void {
  let buf = "";
  const unused = () => {
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  const idle = setTimeout(unused, SPARE_IDLE_MS);
  const onData = (d: Buffer) => {
    buf += d.toString("utf8");
    const nl = buf.indexOf("\n");
    if (nl < 0) return;
    clearTimeout(idle);
    process.stdin.off("data", onData);
    process.stdin.off("end", unused);
    process.stdin.destroy();
    serve(JSON.parse(buf.slice(0, nl)) as HolderSpec);
  };
  process.stdin.on("data", onData);
  process.stdin.on("end", unused);
  process.stdin.on("error", unused);
}

function serve(spec: HolderSpec): void {
  let cols = spec.cols;
  let rows = spec.rows;
  const child = pty.spawn(spec.argv[0] ?? "", spec.argv.slice(1), {
    name: "xterm-256color",
    cols,
    rows,
    cwd: spec.cwd,
    env: spec.env,
    encoding: null,
  });

  const replay: Buffer[] = [];
  let replayBytes = 0;
  const viewers = new Set<net.Socket>();
  let exited = false;

  // The terminal model costs ~100-300 ms of CPU to load: it must not compete with the program's own start,
  // so it loads when first needed, once output piles up, or a little after the start; output waits in order.
  const MODEL_DELAY_MS = 2000;
  const MODEL_PENDING_MAX = 1024 * 1024;
  let model: Promise<Screen> | null = null;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  function screen(): Promise<Screen> {
    model ??= import("./screen.js").then((m) => {
      const s = new m.Screen(cols, rows);
      for (const d of pending) s.write(d);
      pending = [];
      return s;
    });
    return model;
  }
  setTimeout(() => void screen(), MODEL_DELAY_MS).unref();
  function toModel(data: Buffer): void {
    if (model) return void model.then((s) => s.write(data));
    pending.push(data);
    pendingBytes += data.length;
    if (pendingBytes > MODEL_PENDING_MAX) void screen();
  }

  child.onData((d) => {
    const data = d as unknown as Buffer;
    replay.push(data);
    replayBytes += data.length;
    while (replayBytes > REPLAY_MAX_BYTES && replay.length > 1) replayBytes -= replay.shift()?.length ?? 0;
    toModel(data);
    const frame = encodeFrame(FRAME.OUTPUT, data);
    for (const v of viewers) send(v, frame);
  });

  function send(sock: net.Socket, frame: Buffer): void {
    if (sock.destroyed) return;
    if (sock.writableLength > VIEWER_BACKLOG_MAX) {
      sock.destroy();
      viewers.delete(sock);
      return;
    }
    sock.write(frame);
  }

  function resize(c: unknown, r: unknown): void {
    cols = clampSize(c, cols);
    rows = clampSize(r, rows);
    if (exited) return;
    try {
      child.resize(cols, rows);
    } catch {
      return; // the program is exiting
    }
    // Resizes are in order with the output around them (a model not loaded yet starts at the new size).
    if (model) void model.then((s) => s.resize(cols, rows));
  }

  async function handle(
    sock: net.Socket,
    f: Frame,
    role: { viewer: boolean; hello: boolean },
  ): Promise<void> {
    if (!role.hello) {
      if (f.type !== FRAME.HELLO) return void sock.destroy();
      const hello = parseJson<Hello>(f.payload) ?? {};
      role.hello = true;
      role.viewer = hello.role === "viewer";
      if (role.viewer && hello.cols !== undefined) resize(hello.cols, hello.rows);
      send(sock, jsonFrame(FRAME.INFO, { pid: process.pid, childPid: child.pid, cols, rows }));
      if (role.viewer) {
        send(sock, encodeFrame(FRAME.REPLAY, Buffer.concat(replay)));
        viewers.add(sock);
      }
      return;
    }
    if (f.type === FRAME.INPUT) {
      if (!exited) child.write(f.payload);
    } else if (f.type === FRAME.RESIZE) {
      const r = parseJson<{ cols: number; rows: number }>(f.payload) ?? {};
      resize(r.cols, r.rows);
      if (!role.viewer) send(sock, jsonFrame(FRAME.ACK, { ok: true }));
    } else if (f.type === FRAME.PASTE) {
      const p = parseJson<{ text: string; enter: boolean }>(f.payload) ?? {};
      if (exited) return void send(sock, jsonFrame(FRAME.ACK, { error: "the program has exited" }));
      const text = typeof p.text === "string" ? p.text : "";
      if (text !== "") {
        const bracketed = await (await screen()).bracketedPaste();
        child.write(bracketed ? `\x1b[200~${text}\x1b[201~` : text);
      }
      if (p.enter) child.write("\r");
      send(sock, jsonFrame(FRAME.ACK, { ok: true }));
    } else if (f.type === FRAME.CAPTURE) {
      send(sock, encodeFrame(FRAME.TEXT, await (await screen()).render()));
    }
  }

  const server = net.createServer((sock) => {
    const reader = new FrameReader();
    const role = { viewer: false, hello: false };
    // Requests of one client are answered in order, even when one waits on the screen model.
    let queue = Promise.resolve();
    sock.on("data", (chunk) => {
      let frames: Frame[];
      try {
        frames = reader.push(chunk);
      } catch {
        return void sock.destroy();
      }
      for (const f of frames)
        queue = queue.then(() => handle(sock, f, role)).catch(() => void sock.destroy());
    });
    sock.on("error", () => undefined);
    sock.on("close", () => viewers.delete(sock));
  });

  /** Writes `file` whole or not at all. */
  function writeAtomic(file: string, text: string): void {
    const tmp = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, text, { mode: 0o600 });
    fs.renameSync(tmp, file);
  }

  // The socket is the holder's only door: nobody else may connect (0600 from the umask, set just for it).
  fs.rmSync(spec.socket, { force: true });
  const umask = process.umask(0o177);
  server.on("error", (e) => {
    // No socket, no pane: the program is hung up and the backend's spawn reports the holder's exit.
    process.stderr.write(`pty holder: ${e.message}\n`);
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {}
    process.exit(1);
  });
  const listening = new Promise<void>((resolve) =>
    server.listen(spec.socket, () => {
      process.umask(umask);
      // Tells the backend the pane is up (and the program's pid); then stdout is not used again.
      fs.writeSync(1, `${JSON.stringify({ childPid: child.pid })}\n`);
      fs.closeSync(1);
      resolve();
    }),
  );

  child.onExit(async ({ exitCode, signal }) => {
    exited = true;
    // A program that ends at once still gets a pane that started (and says how it ended).
    await listening;
    const status = signal ? { exitCode: null, signal } : { exitCode, signal: null };
    try {
      // The last screen first: whoever sees exit.json may read screen.txt at once.
      writeAtomic(path.join(dir, "screen.txt"), await (await screen()).render());
    } catch {}
    try {
      writeAtomic(path.join(dir, "exit.json"), JSON.stringify(status));
    } catch {}
    const bye = jsonFrame(FRAME.EXIT, status);
    for (const v of viewers) v.end(bye);
    server.close();
    fs.rmSync(spec.socket, { force: true });
    // Let the goodbyes drain, then go: a holder never outlives its program for long.
    setTimeout(() => process.exit(0), 100).unref();
  });

  /** Closing the pane: hang up the program as a closed terminal would, and kill its group if it stays. */
  function hangUp(): void {
    if (exited) process.exit(0);
    try {
      child.kill("SIGHUP");
    } catch {}
    setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      process.exit(0);
    }, HANGUP_GRACE_MS).unref();
  }
  process.on("SIGTERM", hangUp);
  process.on("SIGHUP", hangUp);
  process.on("SIGINT", hangUp);
  // Its folder gone (the state root deleted): no muster command can reach this pane again, so it closes.
  const orphaned = setInterval(() => {
    if (fs.existsSync(dir)) return;
    clearInterval(orphaned);
    hangUp();
  }, ORPHAN_CHECK_MS);
  orphaned.unref();
}

awaitSpec();
