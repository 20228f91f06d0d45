/**
 * Runs a command on this machine: argv only (never a shell), the environment given and nothing else, a
 * timeout, and no inherited descriptor for a command that may start a long-lived server. node:child_process
 * rather than execa: importing execa costs ~150 ms here, paid by every CLI call and child spawn.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import type { ExecOptions, ExecRun } from "../place.js";
import { collectRun } from "./collect.js";

const O_CLOEXEC = 0o2000000;

/**
 * stdio entries (from index 3) that point every descriptor this process would pass to a child — one it
 * inherited without close-on-exec, e.g. a pipe of whoever started `muster mcp` — at /dev/null instead.
 * Linux only (/proc/self/fdinfo); elsewhere nothing is replaced.
 */
function inheritedFdStdio(devNull: number): (number | "ignore")[] {
  const leaked: number[] = [];
  let names: string[] = [];
  try {
    names = fs.readdirSync("/proc/self/fdinfo");
  } catch {
    return [];
  }
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
      if (flags !== undefined && (Number.parseInt(flags, 8) & O_CLOEXEC) === 0) leaked.push(fd);
    } catch {
      // Closed while we looked (the readdir's own descriptor among them).
    }
  }
  if (leaked.length === 0) return [];
  const out: (number | "ignore")[] = Array.from({ length: Math.max(...leaked) - 2 }, () => "ignore");
  for (const fd of leaked) out[fd - 3] = devNull;
  return out;
}

/** Runs argv here; resolves on any exit code, throws ExecFailure when it cannot run or times out. */
export async function execLocal(argv: string[], opts: ExecOptions): Promise<ExecRun> {
  const [bin, ...args] = argv;
  if (bin === undefined) throw new Error("exec: empty argv");
  const devNull = opts.isolate ? fs.openSync("/dev/null", "r+") : -1;
  let child: ReturnType<typeof spawn>;
  try {
    child = spawn(bin, args, {
      env: opts.env,
      stdio: [
        opts.input === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        ...(devNull >= 0 ? inheritedFdStdio(devNull) : []),
      ],
    });
  } finally {
    if (devNull >= 0) fs.closeSync(devNull);
  }
  const run = collectRun(child, opts.timeoutMs);
  if (opts.input !== undefined) {
    child.stdin!.on("error", () => {});
    child.stdin!.end(opts.input);
  }
  return run;
}
