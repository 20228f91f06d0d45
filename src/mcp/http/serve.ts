/**
 * `muster mcp --http`: the same MCP server as stdio (one server core: tools, prompts, progress) over Streamable
 * HTTP at `/mcp`, so a parent on another machine can drive children here. Every request passes guard.ts first
 * (Host, Origin, the token); each client session gets a server of its own over one shared Muster.
 */
import { randomBytes, randomUUID } from "node:crypto";
import * as http from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { resolveSettings } from "../../base/settings/resolve.js";
import { createMuster } from "../../core/muster.js";
import { loadBackendModules } from "../../mux/builtin.js";
import { guardHeaders, type Listening, refuse } from "../../util/http-guard.js";
import {
  checkReach,
  listenOn,
  parseListen,
  untilStopped,
  urlHost,
  warnIfRemote,
  writeToken,
} from "../../util/http-listen.js";
import { createMcpServer, type Log } from "../server.js";

export interface HttpServeOptions {
  /** `host:port` (`[::1]:port` for IPv6); port 0 takes a free one. */
  listen: string;
  /** Where the token is also written (mode 0600), for a client's config to read. */
  tokenFile?: string;
  /** Listen on an address beyond this machine (refused without it). */
  allowRemote?: boolean;
  primary?: string;
}

export const DEFAULT_HTTP_LISTEN = "127.0.0.1:7421";
const ENDPOINT = "/mcp";

interface Session {
  transport: StreamableHTTPServerTransport;
  close(): Promise<void>;
  /** Requests of this session not answered yet (a wait, an open event stream): it is in use meanwhile. */
  open: number;
  /** When its last request ended (or began). */
  lastMs: number;
}

/** Serves until SIGINT or SIGTERM; the children keep running. */
export async function serveHttp(opts: HttpServeOptions, log: Log): Promise<void> {
  const asked = parseListen(opts.listen, DEFAULT_HTTP_LISTEN);
  checkReach(asked, opts.allowRemote);
  await loadBackendModules(process.env);
  const m = createMuster(opts.primary ? { primary: opts.primary } : {});
  const token = randomBytes(32).toString("base64url");
  if (opts.tokenFile) writeToken(opts.tokenFile, token);
  const sessions = new Map<string, Session>();

  const open = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const { server, idle } = createMcpServer(m, log);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        const close = async (): Promise<void> => {
          await server.close();
          await idle();
        };
        sessions.set(id, { transport, close, open: 1, lastMs: Date.now() });
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    res.once("close", () => {
      const s = transport.sessionId ? sessions.get(transport.sessionId) : undefined;
      if (s) inUse(s, -1);
    });
    await transport.handleRequest(req, res);
  };

  const inUse = (s: Session, by: 1 | -1): void => {
    s.open += by;
    s.lastMs = Date.now();
  };
  // A client that went away without ending its session (a crash, a dropped network) would keep its server
  // here for ever: one with no request open for the idle bound is ended; that client starts a new one.
  const idleMs = resolveSettings(process.env).values.mcpSessionIdleMs;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, s] of sessions)
        if (s.open === 0 && now - s.lastMs >= idleMs) {
          sessions.delete(id);
          log(`session ${id} ended after ${Math.round((now - s.lastMs) / 1000)} s with no request`);
          s.close().catch(() => undefined);
        }
    },
    Math.min(60_000, Math.max(50, idleMs / 4)),
  );
  sweep.unref();

  const answer = (res: http.ServerResponse, status: number, message: string): void => {
    res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
    res.end(`${JSON.stringify({ error: message })}\n`);
  };

  let at: Listening = asked;
  const httpServer = http.createServer((req, res) => {
    // The token as a header only: no page of this server trades it for a cookie.
    const refused = refuse(guardHeaders(req.headers, false), at, token);
    if (refused) return answer(res, refused.status, refused.message);
    const url = new URL(req.url ?? "/", "http://here");
    if (url.pathname !== ENDPOINT) return answer(res, 404, `nothing here: the MCP endpoint is ${ENDPOINT}`);
    const id = req.headers["mcp-session-id"];
    const handle = async (): Promise<void> => {
      if (typeof id === "string") {
        const s = sessions.get(id);
        if (!s) return answer(res, 404, "no such session (it ended): start a new one with initialize");
        inUse(s, 1);
        res.once("close", () => inUse(s, -1));
        return s.transport.handleRequest(req, res);
      }
      if (req.method !== "POST") return answer(res, 400, "start a session with an initialize POST");
      return open(req, res);
    };
    handle().catch((e: unknown) => {
      log(`request failed: ${(e as Error)?.stack ?? String(e)}`);
      if (!res.headersSent) answer(res, 500, "internal error");
      else res.end();
    });
  });
  at = await listenOn(httpServer, asked, opts.listen);
  const shown = urlHost(at.host);
  log(`serving primary ${m.primary} for ${m.cwd} at http://${shown}:${at.port}${ENDPOINT}`);
  log(
    `token ${token}${opts.tokenFile ? ` (also in ${opts.tokenFile})` : ""}: send it as Authorization: Bearer <token>`,
  );
  warnIfRemote(at, log);
  await untilStopped();
  clearInterval(sweep);
  httpServer.close();
  await Promise.allSettled([...sessions.values()].map((s) => s.close()));
  httpServer.closeAllConnections();
}
