/**
 * What a place whose hosts see another disk does before a host starts (Place.carry): it marks the child's
 * local dir as a mirror (artifacts/store-mirrored.ts reads that mark), seeds the conversation, and asks the
 * place's keeper (place-keeper-main.ts, started here when none answers) to keep the dir current, returning
 * once the far dir holds everything the host reads at start (meta.json, env.json, the first inbox item):
 * the host may then start. One keeper serves every child of a place over one link, so a spawn after the
 * first costs a request on a socket, not two processes.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { connect } from "node:net";
import * as path from "node:path";
import { childFiles, pathsOfArtifactDir } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { limitsFrom } from "../../config/limits.js";
import { sessionFileOf } from "../../sessions/store.js";
import { writeJsonAtomic } from "../../util/fsx.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { EVENTS_SEED, SESSION_SEED } from "./paths.js";
import { placeLog, placeSocket } from "./place-socket.js";

const MIRROR_DIST = path.join(PACKAGE_ROOT, "dist", "place", "mirror");
const KEEPER = path.join(MIRROR_DIST, "place-keeper-main.js");
const LOG_KEEP_BYTES = 1024 * 1024;

/** The argv of a place's relay hub with this machine's node and install (one link for all children). */
export const localRelayHubArgv = (): string[] => [
  process.execPath,
  path.join(MIRROR_DIST, "relay-hub-main.js"),
];

export interface CarryOptions {
  /** The place's name, kept in the mark; it names the place's keeper. */
  place: string;
  /** The keeper's environment when this starts it (the link runs with it), and the run-slot bound. */
  env: NodeJS.ProcessEnv;
  /** How long the child's mirror may take to catch up. */
  timeoutMs?: number;
  /**
   * `restart` (a host about to start): the child's mirror is started anew, and this waits until the far
   * dir is current. `revive` (a probe of a running child): a mirror nobody keeps (its keeper died) is kept
   * again, without waiting.
   */
  mode?: "restart" | "revive";
}

/**
 * Starts carrying `dir` over the place's link `linkArgv` (a relay hub there: see the top of this file);
 * throws `unreachable` when it cannot.
 */
export async function carryByMirror(dir: string, linkArgv: string[], opts: CarryOptions): Promise<void> {
  const files = childFiles(dir);
  const mode = opts.mode ?? "restart";
  if (mode === "revive" && !fs.existsSync(files.mirror)) return;
  if (mode === "restart") {
    writeJsonAtomic(files.mirror, { v: 1, place: opts.place });
    seedRecord(dir);
  }
  const socket = placeSocket(pathsOfArtifactDir(dir).root, opts.place);
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const request = { op: "keep", dir: path.resolve(dir), mode, maxRunning: limitsFrom(opts.env).maxRunning };
  const fail = (why: string): MusterError =>
    new MusterError(
      "unreachable",
      `place ${opts.place}: the child's mirror could not start: ${why}${lastLine(dir)}`,
    );
  let reply = await ask(socket, request, timeoutMs).catch(() => undefined);
  if (reply === undefined) {
    const started = await startKeeper(socket, linkArgv, opts);
    if (started !== undefined) {
      if (mode === "revive") return;
      throw fail(started);
    }
    reply = await ask(socket, request, timeoutMs).catch((e: Error) => ({ error: e.message }));
  }
  if (mode === "revive") return;
  if ("error" in reply) throw fail(String(reply.error));
}

/**
 * Ends place `place`'s keeper (the place is gone for good: a child's container removed), found from one of
 * its children's dirs, `dir`; nothing to do when no keeper answers.
 */
export async function stopKeeper(dir: string, place: string): Promise<void> {
  const socket = placeSocket(pathsOfArtifactDir(dir).root, place);
  await ask(socket, { op: "stop" }, 10_000).catch(() => undefined);
}

/** Resolves once place `place`'s keeper no longer keeps `dir` (or none answers), or after `timeoutMs`. */
export async function mirrorEnded(dir: string, place: string, timeoutMs: number): Promise<void> {
  const socket = placeSocket(pathsOfArtifactDir(dir).root, place);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const r = (await ask(socket, { op: "dirs" }, 2_000).catch(() => undefined)) as
      | { dirs?: unknown }
      | undefined;
    if (!Array.isArray(r?.dirs) || !r.dirs.includes(path.resolve(dir))) return;
    await new Promise((res) => setTimeout(res, 100));
  }
}

type Reply = { ok: true } | { error: unknown };

/** Sends one request to the keeper at `socket` and reads its one-line answer. */
function ask(socket: string, request: object, timeoutMs: number): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const c = connect(socket);
    let buf = "";
    const timer = setTimeout(() => {
      c.destroy();
      reject(new Error(`no answer within ${timeoutMs / 1000}s`));
    }, timeoutMs);
    c.once("connect", () => c.write(`${JSON.stringify(request)}\n`));
    c.on("data", (b: Buffer) => {
      buf += b.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl < 0) return;
      clearTimeout(timer);
      c.destroy();
      try {
        resolve(JSON.parse(buf.slice(0, nl)) as Reply);
      } catch {
        reject(new Error("the keeper's answer is not JSON"));
      }
    });
    c.once("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    c.once("close", () => {
      clearTimeout(timer);
      reject(new Error("the keeper closed the connection without an answer"));
    });
  });
}

/** Starts the place's keeper; resolves once it listens (or another one does), or with why it did not. */
async function startKeeper(
  socket: string,
  linkArgv: string[],
  opts: CarryOptions,
): Promise<string | undefined> {
  const logFile = placeLog(socket);
  if ((fs.statSync(logFile, { throwIfNoEntry: false })?.size ?? 0) > LOG_KEEP_BYTES) fs.rmSync(logFile);
  const logFd = fs.openSync(logFile, "a", 0o600);
  const keeper = (() => {
    try {
      return spawn(process.execPath, [KEEPER, socket, opts.place, ...linkArgv], {
        detached: true,
        stdio: ["ignore", "pipe", logFd],
        env: opts.env,
      });
    } finally {
      fs.closeSync(logFd);
    }
  })();
  const outcome = await new Promise<string | undefined>((resolve) => {
    let out = "";
    const timer = setTimeout(() => resolve("its keeper did not start listening within 10s"), 10_000);
    keeper.stdout!.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      if (out.includes("ready\n") || out.includes("taken\n")) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    keeper.on("exit", (code) => {
      clearTimeout(timer);
      resolve(`its keeper exited (${code ?? "signal"}) before it listened`);
    });
    keeper.on("error", (e) => {
      clearTimeout(timer);
      resolve(`its keeper did not start: ${e.message}`);
    });
  });
  keeper.stdout!.destroy();
  keeper.unref();
  return outcome;
}

/**
 * Seeds for a far side that lacks what the mirror has: the conversation as the parent began it (spawn seeds
 * it, a fork copies its source's) for one that has none yet, and the event log for one made anew (a
 * suspended Sandbox woken in a new Pod). A far side that has them drops the seeds unread (relay.ts).
 */
function seedRecord(dir: string): void {
  const copy = (from: string, name: string): void => {
    const tmp = path.join(dir, `.${name}.tmp`);
    fs.copyFileSync(from, tmp);
    fs.renameSync(tmp, path.join(dir, name));
  };
  const session = sessionFileOf(dir);
  if (fs.existsSync(session)) copy(session, SESSION_SEED);
  // An empty log needs no seed: every far side has one (a child's first link makes it).
  const events = childFiles(dir).events;
  if ((fs.statSync(events, { throwIfNoEntry: false })?.size ?? 0) > 0) copy(events, EVENTS_SEED);
}

/** The last line of the child's mirror log (keeper.ts), quoted in a failure. */
function lastLine(dir: string): string {
  try {
    const lines = fs.readFileSync(path.join(dir, ".mirror.log"), "utf8").trim().split("\n");
    const last = lines[lines.length - 1];
    return last ? ` (last log line: ${last.slice(0, 300)})` : "";
  } catch {
    return "";
  }
}
