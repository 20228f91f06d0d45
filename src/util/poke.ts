/**
 * Waking an idle child host without inotify: a host records its pid and start time in `host.json` of its
 * artifact dir; whoever drops a file into its inbox/ or control/ then sends it SIGUSR2. An inotify instance
 * per idle host would use up the user's 128 (fs.inotify.max_user_instances) with ~120 children alive.
 * Linux only (the start time comes from /proc); elsewhere hosts keep fs.watch, which costs no such instance.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readJsonBounded } from "./safe-read.js";

/** SIGUSR1 belongs to Node's inspector. */
export const POKE_SIGNAL = "SIGUSR2";

export const HOST_FILE = "host.json";

/** Whether hosts are woken by pokes here (else they watch their folders). */
export const pokesWork = (): boolean => process.platform === "linux" && fs.existsSync("/proc/self/stat");

/** A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat); undefined if gone. */
export function processStart(pid: number | "self"): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so count fields after the last ")".
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/**
 * Written by the host once its SIGUSR2 handler is in place and before it first reads inbox/ and control/: a
 * writer that finds no host.json yet needs no poke (the host's first read sees the file).
 */
export function announceHost(artifactDir: string): void {
  const start = processStart("self");
  if (start === undefined) return;
  const file = path.join(artifactDir, HOST_FILE);
  // Temp + rename without fsync: a host.json lost in a crash costs only a poll, and the host's start stays quick.
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, `${JSON.stringify({ v: 1, pid: process.pid, start })}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
  }
}

/** Removes host.json if it still names this process (a resumed host may have written its own since). */
export function retireHost(artifactDir: string): void {
  const file = path.join(artifactDir, HOST_FILE);
  try {
    const h = readJsonBounded<{ pid?: unknown }>(file, 1024);
    if (h.pid === process.pid) fs.rmSync(file, { force: true });
  } catch {}
}

/**
 * Tells the host of `artifactDir` that its inbox/ or control/ changed; call after the file is renamed in.
 * Best effort: no host yet, a dead host or a reused pid (start time differs) get nothing; the host's slow
 * safety poll covers a poke that could not be sent.
 */
export function pokeHost(artifactDir: string): boolean {
  let host: { pid?: unknown; start?: unknown };
  try {
    host = readJsonBounded<typeof host>(path.join(artifactDir, HOST_FILE), 1024);
  } catch {
    return false;
  }
  const pid = host?.pid;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 1 || typeof host.start !== "string")
    return false;
  // The pid alone could name an unrelated process by now; with its start time it names only that host.
  if (processStart(pid) !== host.start) return false;
  try {
    process.kill(pid, POKE_SIGNAL);
    return true;
  } catch {
    return false;
  }
}
