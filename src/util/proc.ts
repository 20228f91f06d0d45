import * as fs from "node:fs";

/** Whether the child host of `artifactDir` is still the process `pid` (guards against pid reuse on Linux). */
export function hostAlive(pid: number, artifactDir: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(artifactDir);
  } catch {
    return true; // no /proc (macOS): the signal probe is all we have
  }
}

/**
 * hostAlive without blocking the event loop: reading another process's cmdline takes that process's memory
 * lock, which a busy process (32 hosts settling at once) holds for milliseconds at a time.
 */
export async function hostAliveAsync(pid: number, artifactDir: string): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    return (await readSmallFile(`/proc/${pid}/cmdline`)).includes(artifactDir);
  } catch {
    return true; // no /proc (macOS): the signal probe is all we have
  }
}

// A /proc file's size reads 0, so fs.readFile would take a 64 KiB buffer for each: probing idle children
// every few seconds, that was hundreds of KB a second of buffers for the garbage collector (which then ran
// about half of an idle `muster top`'s CPU). Small reads come from Node's shared pool.
const SMALL_READ = 1024;

/**
 * A small file's text (a process's cmdline), read without blocking the event loop in SMALL_READ pieces.
 * fs callbacks, not fs.promises: the promises module costs a command's start ~1 ms to load.
 */
export function readSmallFile(file: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    fs.open(file, "r", (openError, fd) => {
      if (openError) return reject(openError);
      const pieces: Buffer[] = [];
      const done = (e: Error | null): void =>
        fs.close(fd, () => (e ? reject(e) : resolve(Buffer.concat(pieces).toString("utf8"))));
      const next = (): void => {
        const piece = Buffer.allocUnsafe(SMALL_READ);
        fs.read(fd, piece, 0, SMALL_READ, null, (readError, n) => {
          if (readError) return done(readError);
          if (n === 0) return done(null);
          pieces.push(piece.subarray(0, n));
          next();
        });
      };
      next();
    });
  });
}

/** A process as the kernel shows it: its state letter (R, S, D, …) and what it sleeps in (wchan). */
export interface ProcessView {
  pid: number;
  state: string;
  wchan: string;
}

/** The pids in /proc (as its folder names); [] without /proc. */
export function procPids(): string[] {
  try {
    return fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
}

/**
 * A process's /proc stat fields from its state on ("pid (comm) state ppid pgrp session …"): comm may hold spaces
 * and parentheses, so they are read after the last ")". Throws when the process is gone.
 */
function statFields(pid: string): string[] {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** Processes whose command line mentions `needle`, with state and wait channel; [] without /proc. */
export function processesMentioning(needle: string): ProcessView[] {
  const names = procPids();
  const out: ProcessView[] = [];
  for (const n of names) {
    try {
      if (!fs.readFileSync(`/proc/${n}/cmdline`, "utf8").includes(needle)) continue;
      const state = statFields(n)[0] ?? "?";
      let wchan = "";
      try {
        wchan = fs.readFileSync(`/proc/${n}/wchan`, "utf8").trim();
      } catch {}
      out.push({ pid: Number(n), state, wchan: wchan === "0" ? "" : wchan });
    } catch {
      // Exited while we looked.
    }
  }
  return out;
}

/**
 * The processes here that lead a session of their own and carry `name=value` in their environment: how a turn's
 * runner (spawned detached, with the child's MUSTER_ARTIFACT_DIR) is found when its host died before recording
 * its pid. Only this user's processes can be read; [] without /proc.
 */
export function sessionLeadersWithEnv(name: string, value: string): number[] {
  // Each entry ends with NUL; the first one has none before it.
  const later = Buffer.from(`\0${name}=${value}\0`);
  const first = later.subarray(1);
  const out: number[] = [];
  for (const n of procPids()) {
    try {
      // After the state: ppid, pgrp, session.
      if (Number(statFields(n)[3]) !== Number(n)) continue;
      const env = fs.readFileSync(`/proc/${n}/environ`);
      if (env.subarray(0, first.length).equals(first) || env.includes(later)) out.push(Number(n));
    } catch {
      // Exited while we looked, or not ours to read.
    }
  }
  return out;
}

/**
 * The per-user inotify limit (fs.inotify.max_user_instances) and the instances this user's processes hold now
 * (fds linking to anon_inode:inotify); undefined without /proc. Each Node process that watches uses one.
 */
export function inotifyUsage(): { limit: number; inUse: number } | undefined {
  let limit: number;
  try {
    limit = Number(fs.readFileSync("/proc/sys/fs/inotify/max_user_instances", "utf8").trim());
  } catch {
    return undefined;
  }
  const uid = process.getuid?.();
  let inUse = 0;
  for (const n of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (uid !== undefined && fs.statSync(`/proc/${n}`).uid !== uid) continue;
      for (const fd of fs.readdirSync(`/proc/${n}/fd`)) {
        try {
          if (fs.readlinkSync(`/proc/${n}/fd/${fd}`) === "anon_inode:inotify") inUse += 1;
        } catch {}
      }
    } catch {
      // Exited while we looked, or not ours to read.
    }
  }
  return { limit, inUse };
}
