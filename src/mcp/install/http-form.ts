// The HTTP form of muster's entry (`muster mcp install <client> --url`): a client that connects to a
// `muster mcp --http` server instead of starting one. The token's value never goes in a file: each client is
// told the name of the variable that holds it, in its own spelling of a reference.
import { MusterError } from "../../base/errors.js";
import { SETTINGS } from "../../base/settings/table.js";
import { type Doc, isObject } from "./edit.js";
import { type HttpServer, isEnvName } from "./spec.js";

export const DEFAULT_TOKEN_ENV = SETTINGS.mcpToken.env;

const bad = (message: string): MusterError => new MusterError("invalid_argument", message);

/** The server `--url` and `--token-env` name, checked; a bad one is refused in one line. */
export function httpServer(url: string, tokenEnv: string = DEFAULT_TOKEN_ENV): HttpServer {
  if (!isEnvName(tokenEnv)) throw bad(`--token-env: not a variable name: ${tokenEnv}`);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw bad(`--url: not a URL: ${url} (expected http://HOST:PORT/mcp)`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw bad(`--url: ${url} is not an http(s) URL (expected http://HOST:PORT/mcp)`);
  // A secret in the URL would land in the file; the token travels in a header, from a variable.
  if (u.username || u.password)
    throw bad(
      `--url: ${u.protocol}//…@${u.host}: no credentials in the URL; the token comes from $${tokenEnv}`,
    );
  if (u.search || u.hash)
    throw bad(
      `--url: ${url} has a query or fragment; muster's endpoint takes none (the token comes from $${tokenEnv})`,
    );
  // Claude Code and Gemini CLI expand $NAME / ${NAME} in their config: a "$" would not reach the server as written.
  if (u.href.includes("$")) throw bad(`--url: ${url} contains "$", which the clients expand as a variable`);
  return { url: u.href, tokenEnv };
}

/** A URL as written in a config file, compared after the same normalisation (undefined when not a URL). */
export function normalUrl(v: unknown): string | undefined {
  if (typeof v !== "string") return undefined;
  try {
    return new URL(v).href;
  } catch {
    return undefined;
  }
}

/** The Authorization header's value in a client's reference syntax: `${NAME}` or OpenCode's `{env:NAME}`. */
export function bearer(tokenEnv: string, syntax: "dollar" | "opencode"): string {
  return syntax === "opencode" ? `Bearer {env:${tokenEnv}}` : `Bearer \${${tokenEnv}}`;
}

/** `headers` with muster's Authorization set and the user's other headers kept. */
export function withAuthorization(headers: unknown, value: string): Doc {
  const kept = isObject(headers)
    ? Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== "authorization"))
    : {};
  return { ...kept, Authorization: value };
}

/** Removes `keys` from an entry (the other transport's keys when an install switches stdio ↔ url). */
export function dropKeys(entry: Doc, keys: readonly string[]): void {
  for (const k of keys) delete entry[k];
}

/** What the entry lacks for the HTTP form's URL (`urlKey`: the client's name for it). */
export function checkUrl(e: Doc, urlKey: string, server: HttpServer): string[] {
  const have = normalUrl(e[urlKey]);
  if (have === server.url) return [];
  if (have !== undefined) return [`${urlKey} is ${have}, not ${server.url}`];
  return [
    e.command !== undefined
      ? `the entry runs a command (the stdio form), not ${server.url}`
      : `no ${urlKey} in the entry`,
  ];
}

/** What `headers` lacks: an Authorization header that names the token's variable, exactly as written. */
export function checkAuthorization(headers: unknown, server: HttpServer, want: string): string[] {
  const auth = isObject(headers)
    ? Object.entries(headers).find(([k]) => k.toLowerCase() === "authorization")?.[1]
    : undefined;
  return auth === want ? [] : [`headers.Authorization is not "${want}" (the token from $${server.tokenEnv})`];
}

/** For a stdio check of an entry that is the HTTP form: one line saying so, instead of a list of absent keys. */
export function httpFormNote(client: string, url: unknown): string[] {
  const u = typeof url === "string" ? url : "…";
  return [`the entry is the HTTP form (${u}); check it with muster mcp doctor ${client} --url ${u}`];
}
