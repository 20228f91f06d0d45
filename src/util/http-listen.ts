/**
 * What muster's HTTP servers (`mcp --http`, `web`) share around their listening: the `--listen` address checked,
 * loopback unless the user means otherwise, the token written for a client to read, the listen itself with its
 * one-line errors and warning, and the wait for Ctrl-C.
 */
import * as fs from "node:fs";
import type * as http from "node:http";
import type { AddressInfo } from "node:net";
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

/** Listens where asked; resolves with where it listens (a port 0 made real), or throws one line. */
export function listenOn(server: http.Server, asked: Listening, text: string): Promise<Listening> {
  return new Promise<Listening>((resolve, reject) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      reject(
        new MusterError(
          e.code === "EADDRINUSE" ? "busy" : "unsupported",
          `cannot listen on ${text}: ${e.code === "EADDRINUSE" ? "the port is in use" : e.message}`,
        ),
      ),
    );
    server.listen(asked.port, asked.host, () =>
      resolve({ host: asked.host, port: (server.address() as AddressInfo).port }),
    );
  });
}

/** Says, once, what listening beyond this machine means. */
export function warnIfRemote(at: Listening, log: (line: string) => void): void {
  if (!isLoopback(at.host))
    log(
      "warning: listening beyond this machine; anyone who reaches this port and has the token controls your agents",
    );
}

/** Resolves on Ctrl-C or SIGTERM: a server's end (its children keep running). */
export const untilStopped = (): Promise<void> =>
  new Promise<void>((resolve) => {
    process.once("SIGINT", () => resolve());
    process.once("SIGTERM", () => resolve());
  });
