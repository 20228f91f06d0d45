/** muster's long-lived processes (child hosts, pty holders) whose folder is gone: orphans no command reaches. */
import * as fs from "node:fs";
import * as path from "node:path";
import { procPids } from "../util/proc.js";

export interface OrphanProcess {
  pid: number;
  kind: "child host" | "pty holder";
  /** The folder it was started for (its argv), which no longer exists. */
  dir: string;
}

// A host runs as `node …/dist/child/host.bundle.js <artifact-dir>`, a holder as `node …/holder.cjs <folder>`.
const SCRIPTS: [string, OrphanProcess["kind"]][] = [
  [path.join("dist", "child", "host.bundle.js"), "child host"],
  [path.join("dist", "mux", "pty", "holder.cjs"), "pty holder"],
];

/** Every process of this user (Linux /proc; elsewhere none) that is a muster host or holder of a vanished folder. */
export function orphanProcesses(): OrphanProcess[] {
  const pids = procPids();
  const out: OrphanProcess[] = [];
  for (const p of pids) {
    let argv: string[];
    try {
      argv = fs.readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const at = argv.findIndex((a) => SCRIPTS.some(([s]) => a.endsWith(s)));
    const dir = at < 0 ? undefined : argv[at + 1];
    if (!dir || !path.isAbsolute(dir) || fs.existsSync(dir)) continue;
    const kind = SCRIPTS.find(([s]) => argv[at]!.endsWith(s))![1];
    out.push({ pid: Number(p), kind, dir });
  }
  return out;
}
