/**
 * `muster web`: a page over the core's views, served on loopback. Every request passes the shared HTTP guard
 * (Host, Origin, the token) before it is routed, `/` included; a page load may carry the token once as
 * `?token=`, traded for an HttpOnly SameSite=Strict cookie and a redirect that drops it from the address bar.
 * GETs change nothing; a POST must carry a JSON body (a cross-site form cannot send one).
 */
import { randomBytes } from "node:crypto";
import * as http from "node:http";
import type { Duplex } from "node:stream";
import { MusterError } from "../base/errors.js";
import { createMuster, type Muster } from "../core/muster.js";
import { loadBackendModules } from "../mux/builtin.js";
import { guardHeaders, type Listening, refuse, TOKEN_COOKIE } from "../util/http-guard.js";
import {
  checkReach,
  listenOn,
  parseListen,
  untilStopped,
  urlHost,
  warnIfRemote,
  writeToken,
} from "../util/http-listen.js";
import { createWorkflows } from "../workflows/api.js";
import { callApi, isApi } from "./api.js";
import { type Asset, loadAssets, NONCE_MARK } from "./assets.js";
import { TreeFeed } from "./feed.js";
import { isTerminalPath, TerminalRelay } from "./terminal.js";

export interface WebOptions {
  /** `host:port` (`[::1]:port` for IPv6); port 0 takes a free one. */
  listen: string;
  tokenFile?: string;
  allowRemote?: boolean;
  primary?: string;
}

export const DEFAULT_WEB_LISTEN = "127.0.0.1:7420";
const MAX_BODY = 2 * 1024 * 1024;

// The page runs only its own scripts and styles, talks only to this server, and is framed by nobody. The
// terminal (xterm.js) writes its own <style> elements: a page load's nonce lets those, and nothing else, in.
const csp = (nonce?: string): string =>
  `default-src 'none'; script-src 'self'; style-src 'self'${nonce ? ` 'nonce-${nonce}'` : ""}; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
const HEADERS = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": csp(),
};

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...HEADERS, "content-type": "application/json; charset=utf-8" });
  res.end(`${JSON.stringify(body)}\n`);
}

function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => {
      size += d.length;
      if (size > MAX_BODY) {
        reject(new MusterError("invalid_argument", "the request body is too large"));
        req.destroy();
      } else chunks.push(d);
    });
    req.on("error", reject);
    req.on("end", () => {
      try {
        const text = Buffer.concat(chunks).toString("utf8");
        const v: unknown = text.trim() === "" ? {} : JSON.parse(text);
        if (typeof v !== "object" || v === null || Array.isArray(v)) throw new Error("not an object");
        resolve(v as Record<string, unknown>);
      } catch {
        reject(new MusterError("invalid_argument", "the request body must be a JSON object"));
      }
    });
  });
}

/** The request handler, on its own so a test could drive it; `at()` is where the server listens. */
export function webHandler(
  m: Muster,
  feed: TreeFeed,
  assets: Map<string, Asset>,
  token: string,
  at: () => Listening,
  log: (line: string) => void,
): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? "/", "http://here");
    const headers = guardHeaders(req.headers, true);
    const refused = refuse(headers, at(), token);
    const offered = url.searchParams.get("token");
    if (refused?.status === 401 && offered !== null && req.method === "GET" && !isApi(url.pathname)) {
      // A page load with the token in its address: trade it for the cookie, then drop it from the address.
      if (!refuse({ ...headers, authorization: `Bearer ${offered}`, cookie: undefined }, at(), token)) {
        url.searchParams.delete("token");
        res.writeHead(303, {
          ...HEADERS,
          "set-cookie": `${TOKEN_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/`,
          location: `${url.pathname}${url.search}`,
        });
        return res.end();
      }
    }
    if (refused) return reply(res, refused.status, { error: refused.message });
    void route(req, res, url).catch((e: unknown) => {
      if (e instanceof MusterError && e.code === "invalid_argument") {
        if (!res.headersSent) reply(res, 400, { error: e.message });
        return;
      }
      log(`web: request failed: ${(e as Error)?.stack ?? String(e)}`);
      if (!res.headersSent) reply(res, 500, { error: "internal error" });
      else res.end();
    });
  };

  async function route(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? "GET";
    if (method === "GET" && url.pathname === "/api/events") return feed.subscribe(req, res);
    if (isApi(url.pathname)) {
      let body: Record<string, unknown> = {};
      if (method === "POST") {
        const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
        if (type !== "application/json")
          return reply(res, 415, { error: "a POST must be content-type: application/json" });
        body = await readJson(req);
      } else if (method !== "GET") return reply(res, 405, { error: `${method} is not allowed` });
      const r = await callApi(m, method, url.pathname, body);
      if (!r) return reply(res, 404, { error: "no such API" });
      return reply(res, r.status, r.body);
    }
    const asset = assets.get(url.pathname);
    if (!asset) return reply(res, 404, { error: "nothing here" });
    if (method !== "GET" && method !== "HEAD") return reply(res, 405, { error: `${method} is not allowed` });
    let body = asset.body;
    let headers: http.OutgoingHttpHeaders = HEADERS;
    if (url.pathname === "/") {
      const nonce = randomBytes(16).toString("base64");
      body = Buffer.from(body.toString("utf8").replaceAll(NONCE_MARK, nonce));
      headers = { ...HEADERS, "content-security-policy": csp(nonce) };
    }
    res.writeHead(200, { ...headers, "content-type": asset.type, "content-length": body.length });
    res.end(method === "HEAD" ? undefined : body);
  }
}

/**
 * The upgrade handler: a WebSocket passes the same guard as any request (a browser sends the page's Origin and
 * cookie with it), and only a terminal's path is upgraded.
 */
export function webUpgrade(
  terminals: TerminalRelay,
  token: string,
  at: () => Listening,
): (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const url = new URL(req.url ?? "/", "http://here");
    const refused = refuse(guardHeaders(req.headers, true), at(), token);
    const status = refused?.status ?? (isTerminalPath(url.pathname) ? 0 : 404);
    if (status !== 0) {
      socket.end(
        `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`,
      );
      return;
    }
    terminals.upgrade(req, socket, head, url);
  };
}

/** Serves until SIGINT or SIGTERM; the children keep running. */
export async function serveWeb(opts: WebOptions, log: (line: string) => void): Promise<void> {
  const asked = parseListen(opts.listen, DEFAULT_WEB_LISTEN);
  checkReach(asked, opts.allowRemote);
  const assets = loadAssets();
  await loadBackendModules(process.env);
  const m = createMuster(opts.primary ? { primary: opts.primary } : {});
  const token = randomBytes(32).toString("base64url");
  if (opts.tokenFile) writeToken(opts.tokenFile, token);
  const workflows = createWorkflows(m);
  const feed = new TreeFeed(m, log, () => workflows.runs());
  await feed.start();

  let at: Listening = asked;
  const server = http.createServer(webHandler(m, feed, assets, token, () => at, log));
  const terminals = new TerminalRelay(m, log);
  server.on(
    "upgrade",
    webUpgrade(terminals, token, () => at),
  );
  try {
    at = await listenOn(server, asked, opts.listen);
  } catch (e) {
    await feed.close();
    throw e;
  }
  const base = `http://${urlHost(at.host)}:${at.port}/`;
  log(`muster web: primary ${m.primary} for ${m.cwd}`);
  log(`open ${base}?token=${token}${opts.tokenFile ? ` (token also in ${opts.tokenFile})` : ""}`);
  warnIfRemote(at, log);
  await untilStopped();
  server.close();
  terminals.close();
  await feed.close();
  server.closeAllConnections();
}
