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

/** A process as the kernel shows it: its state letter (R, S, D, …) and what it sleeps in (wchan). */
export interface ProcessView {
  pid: number;
  state: string;
  wchan: string;
}

/** Processes whose command line mentions `needle`, with state and wait channel; [] without /proc. */
export function processesMentioning(needle: string): ProcessView[] {
  let names: string[];
  try {
    names = fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n));
  } catch {
    return [];
  }
  const out: ProcessView[] = [];
  for (const n of names) {
    try {
      if (!fs.readFileSync(`/proc/${n}/cmdline`, "utf8").includes(needle)) continue;
      // stat is "pid (comm) state …"; comm may hold spaces and parentheses, so read after the last ")".
      const stat = fs.readFileSync(`/proc/${n}/stat`, "utf8");
      const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? "?";
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
