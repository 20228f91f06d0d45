/**
 * What muster's HTTP servers (`mcp --http`, `web`) share before they listen: the `--listen` address checked,
 * loopback unless the user means otherwise, and the token written for a client to read.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { writeFileAtomic } from "./fsx.js";
import { isLoopback, type Listening } from "./http-guard.js";

/** `host:port` as the user wrote it, checked; `example` is the default shown in the error. */
export function parseListen(text: string, example = "127.0.0.1:7421"): Listening {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535)
    throw new MusterError("invalid_argument", `--listen must be host:port (e.g. ${example}), not "${text}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/** Refuses an address other machines can reach unless `--allow-remote` says it is meant. */
export function checkReach(at: Listening, allowRemote: boolean | undefined): void {
  if (!isLoopback(at.host) && !allowRemote)
    throw new MusterError(
      "invalid_argument",
      `${at.host} is reachable from other machines: add --allow-remote to mean it (better: keep 127.0.0.1 and use an SSH tunnel)`,
    );
}

/** The token, for a client's config to read: the owner's alone, its folder made if missing. */
export function writeToken(file: string, token: string): void {
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
    writeFileAtomic(file, `${token}\n`, 0o600);
  } catch (e) {
    throw new MusterError("storage", `cannot write the token file ${file}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/** The host as a URL names it (IPv6 in brackets). */
export const urlHost = (host: string): string => (host.includes(":") ? `[${host}]` : host);
