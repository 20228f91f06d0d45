/**
 * A child's pane as a live terminal in the page: a WebSocket at `/api/children/<id>/terminal` on which the
 * server runs the core's viewer command for the pane in a pseudo-terminal of the page's size and relays bytes
 * both ways. Read-only unless the socket was opened with `?input=1`: a read-only viewer's keys are dropped here,
 * and tmux holds that viewer read-only and out of the window's sizing as well. Closing the socket ends the
 * viewer (its tmux session goes with its client); the child runs on.
 *
 * The page sends JSON text frames (`{type: "input", data}`, `{type: "resize", cols, rows}`); the server sends
 * the terminal's bytes as binary frames and, as JSON text, `{type: "error", message}` or `{type: "exit"}`.
 * Each socket is pinged every MUSTER_WEB_HEARTBEAT_MS (browsers answer by themselves): one that did not answer
 * the last ping (a laptop closed, a network gone without a close) is ended with its viewer.
 */
import type * as http from "node:http";
import type { Duplex } from "node:stream";
import type { IPty } from "node-pty";
import { type WebSocket, WebSocketServer } from "ws";
import { MusterError } from "../base/errors.js";
import { resolveSettings } from "../base/settings/resolve.js";
import type { Muster } from "../core/muster.js";
import { nodePty } from "../util/node-pty.js";

const PATH = /^\/api\/children\/([^/]+)\/terminal$/;
// A page's keystrokes and resizes are small; a paste is bounded by this.
const MAX_FRAME = 256 * 1024;
// The page asks for its size; anything outside these is a broken page, clamped.
const clamp = (n: unknown, lo: number, hi: number, dflt: number): number =>
  typeof n === "number" && Number.isFinite(n) ? Math.min(hi, Math.max(lo, Math.round(n))) : dflt;

/** Whether a path is a terminal socket's. */
export const isTerminalPath = (pathname: string): boolean => PATH.test(pathname);

/** Where the pseudo-terminal comes from: node-pty, loaded on the first terminal asked for. */
type PtyModule = typeof import("node-pty");

export class TerminalRelay {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME });
  private readonly viewers = new Set<IPty>();
  private pty: Promise<PtyModule> | undefined;
  /** Sockets that answered the last ping (or opened since). */
  private readonly answered = new WeakSet<WebSocket>();
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly muster: Muster,
    private readonly log: (line: string) => void,
  ) {}

  /** Takes an upgrade that passed the guard: opens the socket, then the viewer behind it. */
  upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, url: URL): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      this.answered.add(ws);
      ws.on("pong", () => this.answered.add(ws));
      this.heartbeat ??= this.beat();
      void this.serve(ws, url).catch((e: unknown) => {
        const message = e instanceof MusterError ? e.message : `the terminal failed: ${(e as Error).message}`;
        if (!(e instanceof MusterError)) this.log(`web: ${message}`);
        closeWith(ws, { type: "error", message });
      });
    });
  }

  private async serve(ws: WebSocket, url: URL): Promise<void> {
    const raw = PATH.exec(url.pathname)?.[1] ?? "";
    let id: string;
    try {
      id = decodeURIComponent(raw);
    } catch {
      throw new MusterError("invalid_id", "a malformed id in the path");
    }
    const input = url.searchParams.get("input") === "1";
    const cols = clamp(Number(url.searchParams.get("cols")), 20, 500, 100);
    const rows = clamp(Number(url.searchParams.get("rows")), 5, 200, 30);
    const { command } = this.muster.viewCommand(id, { input });
    const pty = await this.loadPty();
    if (ws.readyState !== ws.OPEN) return;
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm-256color" };
    // The viewer is a client of its own, not nested inside the tmux this server may run in.
    delete env.TMUX;
    delete env.TMUX_PANE;
    const term = pty.spawn(command[0]!, command.slice(1), {
      name: "xterm-256color",
      cols,
      rows,
      cwd: this.muster.cwd,
      env,
      encoding: null,
    });
    this.viewers.add(term);
    term.onData((d) => {
      if (ws.readyState === ws.OPEN) ws.send(d as unknown as Buffer, { binary: true });
    });
    term.onExit(() => {
      this.viewers.delete(term);
      closeWith(ws, { type: "exit" });
    });
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      let m: { type?: unknown; data?: unknown; cols?: unknown; rows?: unknown };
      try {
        m = JSON.parse(data.toString()) as typeof m;
      } catch {
        return;
      }
      if (m.type === "resize") term.resize(clamp(m.cols, 20, 500, cols), clamp(m.rows, 5, 200, rows));
      else if (m.type === "input" && input && typeof m.data === "string") term.write(m.data);
    });
    ws.on("close", () => {
      this.viewers.delete(term);
      term.kill();
    });
  }

  /** Pings every socket each beat; one that did not answer the previous ping is ended (its viewer with it). */
  private beat(): NodeJS.Timeout {
    const t = setInterval(() => {
      for (const ws of this.wss.clients) {
        if (!this.answered.has(ws)) {
          ws.terminate();
          continue;
        }
        this.answered.delete(ws);
        ws.ping();
      }
    }, resolveSettings(process.env).values.webHeartbeatMs);
    t.unref();
    return t;
  }

  private loadPty(): Promise<PtyModule> {
    const found = nodePty();
    if ("problem" in found)
      throw new MusterError(
        "unsupported",
        `no live terminal here: ${found.problem}; the page shows snapshots`,
      );
    this.pty ??= import("node-pty");
    return this.pty;
  }

  /** Ends every viewer and socket (the server is stopping). */
  close(): void {
    clearInterval(this.heartbeat);
    for (const t of this.viewers) t.kill();
    this.viewers.clear();
    for (const ws of this.wss.clients) ws.terminate();
    this.wss.close();
  }
}

function closeWith(ws: WebSocket, message: { type: string; message?: string }): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify(message));
  ws.close(1000);
}
