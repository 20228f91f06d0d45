/**
 * What every request to muster's HTTP servers (`mcp --http`, `web`) passes before anything is routed: its Host
 * names this server (a DNS-rebound name does not), its Origin, when a browser sends one, is this server's own,
 * and it carries the server's token as `Authorization: Bearer <token>` or, from the web page, as the
 * `muster_token` cookie. Pure, so each rule is tested on its own.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** The cookie a page load's one-time `?token=` is traded for (HttpOnly, SameSite=Strict). */
export const TOKEN_COOKIE = "muster_token";

/** Where the server listens, as a request's Host header may name it. */
export interface Listening {
  host: string;
  port: number;
}

/** Why a request is refused, as an HTTP status and one line; undefined: it may go on. */
export interface Refusal {
  status: 401 | 403;
  message: string;
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** Whether an address is this machine's own (the default; anything else is an explicit choice). */
export const isLoopback = (host: string): boolean =>
  host === "127.0.0.1" || host === "::1" || host === "localhost" || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The host:port spellings a request to this server may carry in Host (and Origin, after the scheme). */
export function ownAuthorities(at: Listening): Set<string> {
  const names = isLoopback(at.host) ? LOOPBACK_NAMES : [at.host.includes(":") ? `[${at.host}]` : at.host];
  return new Set(names.map((n) => `${n}:${at.port}`));
}

/** What `refuse` reads of a request's headers; the cookie only for a server whose page may carry it. */
export function guardHeaders(
  h: IncomingHttpHeaders,
  withCookie: boolean,
): { host?: string; origin?: string; authorization?: string; cookie?: string } {
  return {
    host: h.host,
    origin: h.origin,
    authorization: h.authorization,
    ...(withCookie ? { cookie: h.cookie } : {}),
  };
}

/** Checks one request's headers, in the order that reveals least: Host, Origin, then the token. */
export function refuse(
  headers: { host?: string; origin?: string; authorization?: string; cookie?: string },
  at: Listening,
  token: string,
): Refusal | undefined {
  const own = ownAuthorities(at);
  if (!headers.host || !own.has(headers.host.toLowerCase()))
    return { status: 403, message: "this server does not answer to that Host" };
  if (headers.origin !== undefined && !sameOrigin(headers.origin, own))
    return { status: 403, message: "requests from another origin are refused" };
  const bearer = /^Bearer (\S+)$/i.exec(headers.authorization ?? "")?.[1];
  // A wrong Bearer is not rescued by a cookie: what a client says explicitly is what is checked.
  const given = bearer ?? cookieValue(headers.cookie, TOKEN_COOKIE);
  if (given === undefined || !sameSecret(given, token))
    return { status: 401, message: "a valid token is required (Authorization: Bearer <token>)" };
  return undefined;
}

/** One cookie's value from a Cookie header; undefined when absent. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

function sameOrigin(origin: string, own: Set<string>): boolean {
  try {
    const u = new URL(origin);
    return u.protocol === "http:" && u.pathname === "/" && own.has(u.host.toLowerCase());
  } catch {
    return false;
  }
}

/** Compares in constant time: how long a wrong token takes says nothing of the right one. */
function sameSecret(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}
