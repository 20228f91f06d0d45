/**
 * Runs one program to its end, bounded in time and in the output kept: its stdout and stderr together, only
 * their last `keepBytes`. It leads a process group of its own, so a timeout stops everything it started
 * (TERM, then KILL), and so does its end: nothing it left in its group outlives the run.
 */
import { spawn } from "node:child_process";
import { groupAlive, terminateGroup } from "./process-group.js";

export interface BoundedRunOptions {
  cwd: string;
  /** The program's whole environment. */
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** How much of the end of its output to keep. */
  keepBytes: number;
  /** Stops it early (its whole group, as a timeout does): the run then ends with its signal. */
  signal?: AbortSignal;
}

export interface BoundedRun {
  /** Its exit status; null when a signal ended it (a timeout's, or another). */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** The last `keepBytes` of its output, as UTF-8 from the first whole character. */
  outputTail: string;
  /** All it printed, in bytes (more than the tail holds when it was cut). */
  outputBytes: number;
}

/** The part of a stream's end still held, cut to a bound as bytes arrive. */
class Tail {
  private chunks: Buffer[] = [];
  private held = 0;
  total = 0;

  constructor(private readonly keep: number) {}

  push(b: Buffer): void {
    this.total += b.length;
    this.chunks.push(b);
    this.held += b.length;
    while (this.held - (this.chunks[0]?.length ?? 0) >= this.keep) this.held -= this.chunks.shift()!.length;
  }

  text(): string {
    let b = Buffer.concat(this.chunks);
    if (b.length > this.keep) b = b.subarray(b.length - this.keep);
    // A cut may land inside a character: start at the first byte that is not a continuation byte.
    let i = 0;
    while (i < b.length && i < 4 && (b[i]! & 0xc0) === 0x80) i++;
    return b.subarray(i).toString("utf8");
  }
}

// After its exit, how long output still in the pipes may take to arrive before the run is over.
const DRAIN_MS = 500;

/** Runs argv (never through a shell) as BoundedRunOptions say; rejects only when it could not start at all. */
export function runBounded(argv: string[], opts: BoundedRunOptions): Promise<BoundedRun> {
  const [bin, ...args] = argv;
  if (bin === undefined) return Promise.reject(new Error("runBounded: empty argv"));
  const started = Date.now();
  const tail = new Tail(opts.keepBytes);
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: opts.cwd,
      env: opts.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) void terminateGroup(child.pid);
    }, opts.timeoutMs);
    const stop = (): void => {
      if (child.pid !== undefined) void terminateGroup(child.pid, 1000);
    };
    if (opts.signal?.aborted) stop();
    else opts.signal?.addEventListener("abort", stop, { once: true });
    child.stdout.on("data", (b: Buffer) => tail.push(b));
    child.stderr.on("data", (b: Buffer) => tail.push(b));
    child.once("error", (e) => {
      clearTimeout(timer);
      if (!settled) {
        settled = true;
        reject(e);
      }
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", stop);
      const pid = child.pid!;
      let drained = 0;
      const finish = async () => {
        if (settled) return;
        settled = true;
        clearTimeout(grace);
        child.stdout.destroy();
        child.stderr.destroy();
        // What it left running in its group goes with it (a daemon it forked, a pipe still held).
        if (groupAlive(pid)) await terminateGroup(pid, 1000);
        resolve({
          exitCode: code,
          signal,
          timedOut,
          durationMs: Date.now() - started,
          outputTail: tail.text(),
          outputBytes: tail.total,
        });
      };
      const grace = setTimeout(finish, DRAIN_MS);
      const closed = () => {
        drained += 1;
        if (drained === 2) finish();
      };
      if (child.stdout.readableEnded) closed();
      else child.stdout.once("end", closed);
      if (child.stderr.readableEnded) closed();
      else child.stderr.once("end", closed);
    });
  });
}
