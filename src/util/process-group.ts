import * as fs from "node:fs";
import * as os from "node:os";

/** Whether any process of the group led by pgid is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** TERM the whole group, wait up to graceMs, then KILL and wait until it is gone (bounded). */
export async function terminateGroup(pgid: number, graceMs = 2000): Promise<void> {
  signalGroup(pgid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < deadline) await sleep(25);
  if (!groupAlive(pgid)) return;
  signalGroup(pgid, "SIGKILL");
  const hard = Date.now() + 2000;
  while (groupAlive(pgid) && Date.now() < hard) await sleep(10);
}

/** Sends `signal` to one process, best effort: one that is gone already needs nothing. */
export function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {}
}

/**
 * Moves a process to the lowest CPU priority, best effort (a process's owner may always lower it): for work no one
 * waits on, which then runs only when nothing that someone waits on wants the CPU.
 */
export function lowestPriority(pid: number): void {
  try {
    os.setPriority(pid, os.constants.priority.PRIORITY_LOW);
  } catch {
    // Gone already: nothing left to run.
    return;
  }
  lowestGroupPriority(pid);
}

/**
 * Where Linux gives every session a scheduling group of its own (`sched_autogroup`), nice weighs a process only
 * against its own session: a process in a session of its own is lowered against the others by its group's nice.
 * Its owner may lower that; a group that is also ours is left alone, as lowering it would lower us.
 */
function lowestGroupPriority(pid: number): void {
  try {
    const theirs = fs.readFileSync(`/proc/${pid}/autogroup`, "latin1").split(" ")[0];
    const ours = fs.readFileSync("/proc/self/autogroup", "latin1").split(" ")[0];
    if (theirs && theirs !== ours) fs.writeFileSync(`/proc/${pid}/autogroup`, "19");
  } catch {
    // No autogroups here (another OS, a kernel without them, a cgroup), or the process is gone.
  }
}
