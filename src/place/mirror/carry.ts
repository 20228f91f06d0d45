/**
 * What a place whose hosts see another disk does before a host starts (Place.carry): it marks the child's
 * local dir as a mirror (artifacts/store-mirrored.ts reads that mark), stops a keeper left from the child's
 * last run, and starts a detached keeper (keeper.ts) over the place's link, returning once the far dir holds
 * everything the host reads at start (meta.json, env.json, the first inbox item): the host may then start.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { childFiles } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { sessionFileOf } from "../../sessions/store.js";
import { writeJsonAtomic } from "../../util/fsx.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { isKeeperOf, keeperPid } from "./keeper-lock.js";
import { SESSION_SEED } from "./paths.js";

const MIRROR_DIST = path.join(PACKAGE_ROOT, "dist", "place", "mirror");
const KEEPER = path.join(MIRROR_DIST, "keeper-main.js");
const LOG = ".mirror.log";
const LOG_KEEP_BYTES = 1024 * 1024;

/** The argv of a relay of `dir` started with this machine's node and install (a place on this machine). */
export const localRelayArgv = (dir: string): string[] => [
  process.execPath,
  path.join(MIRROR_DIST, "relay-main.js"),
  dir,
  "--session",
];

export interface CarryOptions {
  /** The place's name, kept in the mark. */
  place: string;
  env: NodeJS.ProcessEnv;
  /** How long the first link may take to catch up. */
  timeoutMs?: number;
  /**
   * `restart` (a host about to start): a keeper left from the child's last run is replaced, and this waits
   * until the far dir is current. `revive` (a probe of a running child): a keeper that died is started again,
   * without waiting; a running one is left alone.
   */
  mode?: "restart" | "revive";
}

/** Starts carrying `dir` over `linkArgv` (see the top of this file); throws `unreachable` when it cannot. */
export async function carryByMirror(dir: string, linkArgv: string[], opts: CarryOptions): Promise<void> {
  const files = childFiles(dir);
  const running = runningKeeper(dir);
  if (opts.mode === "revive") {
    if (running !== undefined || !fs.existsSync(files.mirror)) return;
  } else {
    writeJsonAtomic(files.mirror, { v: 1, place: opts.place });
    if (running !== undefined) await stopKeeper(running, dir);
    seedConversation(dir);
  }
  const logFile = path.join(dir, LOG);
  if ((fs.statSync(logFile, { throwIfNoEntry: false })?.size ?? 0) > LOG_KEEP_BYTES) fs.rmSync(logFile);
  const logFd = fs.openSync(logFile, "a", 0o600);
  const keeper = (() => {
    try {
      return spawn(process.execPath, [KEEPER, dir, ...linkArgv], {
        detached: true,
        stdio: ["ignore", "pipe", logFd],
        env: opts.env,
      });
    } finally {
      fs.closeSync(logFd);
    }
  })();
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const outcome = await new Promise<string | undefined>((resolve) => {
    let out = "";
    const timer = setTimeout(
      () => resolve(`its first link did not catch up within ${timeoutMs / 1000}s`),
      timeoutMs,
    );
    keeper.stdout!.on("data", (b: Buffer) => {
      out += b.toString("utf8");
      if (out.includes("synced\n")) {
        clearTimeout(timer);
        resolve(undefined);
      }
    });
    keeper.on("exit", (code) => {
      clearTimeout(timer);
      resolve(`its keeper exited (${code ?? "signal"}) before the first link caught up`);
    });
    keeper.on("error", (e) => {
      clearTimeout(timer);
      resolve(`its keeper did not start: ${e.message}`);
    });
  });
  keeper.stdout!.destroy();
  keeper.unref();
  if (opts.mode === "revive") return;
  if (outcome !== undefined) {
    if (keeper.pid) stopKeeper(keeper.pid, dir).catch(() => {});
    throw new MusterError(
      "unreachable",
      `place ${opts.place}: the child's mirror could not start: ${outcome}${lastLine(logFile)}`,
    );
  }
}

/**
 * The conversation as the parent began it (spawn seeds it, a fork copies its source's), for a far side
 * that has none yet; one that has it drops the seed unread (relay.ts).
 */
function seedConversation(dir: string): void {
  const session = sessionFileOf(dir);
  if (!fs.existsSync(session)) return;
  const seed = path.join(dir, SESSION_SEED);
  const tmp = path.join(dir, `.${SESSION_SEED}.tmp`);
  fs.copyFileSync(session, tmp);
  fs.renameSync(tmp, seed);
}

/** The pid of the keeper running for `dir` (keeper-lock.ts), if one is. */
function runningKeeper(dir: string): number | undefined {
  const pid = keeperPid(dir);
  return pid !== undefined && isKeeperOf(pid, dir) ? pid : undefined;
}

/** Stops the keeper `pid` if it still is this dir's keeper, waiting (bounded) for it to go. */
async function stopKeeper(pid: number, dir: string): Promise<void> {
  try {
    process.kill(pid, "SIGTERM");
  } catch {
    return;
  }
  for (let i = 0; i < 300 && isKeeperOf(pid, dir); i++) await new Promise((r) => setTimeout(r, 10));
}

function lastLine(file: string): string {
  try {
    const lines = fs.readFileSync(file, "utf8").trim().split("\n");
    const last = lines[lines.length - 1];
    return last ? ` (last log line: ${last.slice(0, 300)})` : "";
  } catch {
    return "";
  }
}
