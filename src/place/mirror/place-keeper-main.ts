/**
 * `node dist/place/mirror/place-keeper-main.js <socket> <place> <link argv…>`: one place's keeper
 * (place-keeper.ts), serving requests on a unix socket: each is one JSON line, answered with one —
 * `{"op":"keep","dir":…,"mode":"restart"|"revive","maxRunning":N}` → `{"ok":true}` (for restart, once the
 * child's mirror caught up) or `{"error":"…"}`; `{"op":"dirs"}` → `{"dirs":[…]}`; `{"op":"stop"}` →
 * `{"ok":true}`, then the keeper ends (its place is gone for good). Prints `ready` on stdout
 * once it listens, `taken` when another keeper already serves the socket (and exits 0). Logs on stderr;
 * exits 0 when idle or stopped, 2 on a bad argument.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { childFiles } from "../../artifacts/layout.js";
import { noticesSettled } from "../../notify/notifier.js";
import { type KeepRequest, PlaceKeeper } from "./place-keeper.js";

const STALE_LOCK_MS = 10_000;
const MAX_REQUEST = 64 * 1024;

async function main(argv: string[]): Promise<void> {
  const [socket, place, ...link] = argv;
  if (!socket || !place || link.length === 0) {
    process.stderr.write("usage: place-keeper-main.js <socket> <place> <link argv…>\n");
    process.exit(2);
  }
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${place}: ${line}\n`);
  };
  process.stdout.on("error", () => {});
  const server = await listenAlone(socket);
  if (!server) {
    process.stdout.write("taken\n");
    process.exit(0);
  }
  const leave = (): void => {
    server.close();
    fs.rmSync(socket, { force: true });
    log("keeper ended");
    // A notice still being sent (each send is bounded) is not cut short; a new keeper may serve meanwhile.
    void noticesSettled().finally(() => process.exit(0));
  };
  const keeper = new PlaceKeeper(link, { env: process.env, log, holder: socket, onIdle: leave });
  server.on("connection", (conn) => serve(conn, keeper, log));
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => keeper.stop(sig));
  log(`keeper listening (pid ${process.pid})`);
  process.stdout.write("ready\n");
}

/** Listens on `socket` unless a live keeper already does (then undefined); a stale socket is replaced. */
async function listenAlone(socket: string): Promise<net.Server | undefined> {
  const lock = `${socket}.lock`;
  for (let i = 0; ; i++) {
    try {
      fs.mkdirSync(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS || i > 1000) fs.rmSync(lock, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 10));
    }
  }
  try {
    if (await answers(socket)) return undefined;
    fs.rmSync(socket, { force: true });
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => resolve());
    });
    fs.chmodSync(socket, 0o600);
    return server;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = net.connect(socket);
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

function serve(conn: net.Socket, keeper: PlaceKeeper, log: (l: string) => void): void {
  let buf = "";
  conn.on("error", () => {});
  conn.on("data", (b: Buffer) => {
    buf += b.toString("utf8");
    if (buf.length > MAX_REQUEST) return conn.destroy();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      answer(line, keeper).then(
        (reply) => conn.write(`${JSON.stringify(reply)}\n`),
        (e: Error) => {
          log(`request refused: ${e.message}`);
          conn.write(`${JSON.stringify({ error: e.message })}\n`);
        },
      );
    }
  });
}

async function answer(line: string, keeper: PlaceKeeper): Promise<object> {
  const req = JSON.parse(line) as { op?: unknown } & Partial<KeepRequest>;
  if (req.op === "dirs") return { dirs: keeper.dirs() };
  if (req.op === "stop") {
    // After the answer is on its way: the keeper's end closes the server.
    setImmediate(() => keeper.stop("its place is gone"));
    return { ok: true };
  }
  if (req.op !== "keep") throw new Error(`unknown request ${JSON.stringify(req.op)}`);
  const { dir, mode, maxRunning } = req;
  if (typeof dir !== "string" || !path.isAbsolute(dir) || path.resolve(dir) !== dir)
    throw new Error("keep: dir must be an absolute, normal path");
  if (mode !== "restart" && mode !== "revive") throw new Error("keep: mode must be restart or revive");
  if (typeof maxRunning !== "number" || !Number.isInteger(maxRunning) || maxRunning < 1)
    throw new Error("keep: maxRunning must be a positive whole number");
  // Only a dir that carry marked as a mirror is kept.
  if (!fs.existsSync(childFiles(dir).mirror)) throw new Error(`keep: ${dir} is not marked as a mirror`);
  await keeper.keep({ dir, mode, maxRunning });
  return { ok: true };
}

main(process.argv.slice(2)).catch((e: Error) => {
  process.stderr.write(`place keeper: ${e.message}\n`);
  process.exit(2);
});
