import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Runs `node <args>` under strace (installed by .ci/run, as tmux and sshd are) and counts the fsync and fdatasync
 * calls it and its threads made. `input` goes to its stdin.
 */
export function fsyncsOfNode(args: string[], input = ""): number {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-strace-"));
  try {
    const trace = path.join(dir, "trace");
    execFileSync(
      "strace",
      ["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o", trace, process.execPath, ...args],
      { input, stdio: ["pipe", "ignore", "inherit"] },
    );
    return fs
      .readFileSync(trace, "utf8")
      .split("\n")
      .filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `node <args>` under strace and returns the trace of its reads, with each file's path (`-y`). */
export function readsOfNode(args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-strace-"));
  try {
    const trace = path.join(dir, "trace");
    const argv = ["-f", "-qq", "-y", "-e", "trace=read,pread64", "-o", trace, process.execPath, ...args];
    execFileSync("strace", argv, { ...opts, stdio: "ignore" });
    return fs.readFileSync(trace, "utf8");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Bytes a trace (`strace -f -y -e trace=read,pread64`) shows read from files whose path `which` picks. A call
 * another thread interrupted is split in two lines (`<unfinished ...>`, then `<... pread64 resumed>` with the
 * result): the path is taken from the first, the count from the second.
 */
export function bytesReadFrom(trace: string, which: (file: string) => boolean): number {
  let total = 0;
  const unfinished = new Map<string, string>();
  for (const line of trace.split("\n")) {
    const call = /^(\d+)\s+(?:read|pread64)\(\d+<([^>]*)>/.exec(line);
    if (call && line.endsWith("<unfinished ...>")) {
      unfinished.set(call[1]!, call[2]!);
      continue;
    }
    const resumed = /^(\d+)\s+<\.\.\. (?:read|pread64) resumed>.*\)\s+=\s+(\d+)$/.exec(line);
    const file = call?.[2] ?? (resumed ? unfinished.get(resumed[1]!) : undefined);
    if (resumed) unfinished.delete(resumed[1]!);
    const got = call ? /\)\s+=\s+(\d+)$/.exec(line)?.[1] : resumed?.[2];
    if (file !== undefined && got !== undefined && which(file)) total += Number(got);
  }
  return total;
}

/**
 * Traces the reads of a running process (and its threads and children) from now until the returned stop is
 * called; stop resolves to the trace. Waits until the tracer is attached, so nothing before stop is missed.
 */
export async function traceReadsOf(pid: number): Promise<{ stop(): Promise<string> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-strace-"));
  const file = path.join(dir, "trace");
  const tracer = spawn(
    "strace",
    ["-f", "-qq", "-y", "-e", "trace=read,pread64", "-o", file, "-p", String(pid)],
    {
      stdio: "ignore",
    },
  );
  const exited = new Promise<void>((resolve) => tracer.once("exit", () => resolve()));
  const attached = () => /^TracerPid:\s*[1-9]/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
  for (const end = Date.now() + 10_000; !attached(); ) {
    if (Date.now() > end || tracer.exitCode !== null) {
      tracer.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`strace did not attach to ${pid}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    async stop() {
      tracer.kill("SIGINT");
      await exited;
      try {
        return fs.readFileSync(file, "utf8");
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
