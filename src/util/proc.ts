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
