/**
 * One keeper per mirror: two would both append to the mirror's log. A keeper holds `.mirror.keeper` (its
 * pid, created exclusively) while it runs; one that finds a live keeper there leaves. A file whose pid is
 * gone or runs something else is stale and taken over.
 */
import * as fs from "node:fs";
import * as path from "node:path";

const LOCK = ".mirror.keeper";

export function keeperPid(dir: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(dir, LOCK), "utf8").trim());
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a keeper of `dir` (its command line names the keeper and the dir). */
export function isKeeperOf(pid: number, dir: string): boolean {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return cmd.some((w) => w.endsWith("keeper-main.js")) && cmd.includes(dir);
  } catch {
    return false;
  }
}

/** Takes the keeper lock of `dir` for this process; false when a live keeper holds it. */
export function takeKeeperLock(dir: string): boolean {
  const file = path.join(dir, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const pid = keeperPid(dir);
      if (pid !== undefined && pid !== process.pid && isKeeperOf(pid, dir)) return false;
      fs.rmSync(file, { force: true });
    }
  }
  return false;
}

/** Gives the lock up if it is still ours. */
export function dropKeeperLock(dir: string): void {
  if (keeperPid(dir) === process.pid) fs.rmSync(path.join(dir, LOCK), { force: true });
}
