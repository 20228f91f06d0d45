/**
 * Sends one notice to one target, bounded: each attempt has a time limit, a failed one is tried again after a
 * backoff, a few times at most. An ntfy topic gets the text with a title; a webhook gets the notice as JSON; a
 * command runs by argv (never a shell) with the notice in its environment.
 */
import { runBounded } from "../util/bounded-run.js";
import type { Notice } from "./notice.js";
import type { NotifyTarget } from "./targets.js";

export interface SendOptions {
  timeoutMs?: number;
  attempts?: number;
  /** Before attempt n (from 2): how long to wait. */
  backoffMs?: (attempt: number) => number;
}

const DEFAULTS = { timeoutMs: 5000, attempts: 3, backoffMs: (n: number) => 1000 * 2 ** (n - 2) };

export type SendResult = { ok: true; attempts: number } | { ok: false; attempts: number; error: string };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Sends the notice, trying again on failure; never throws. */
export async function sendNotice(
  target: NotifyTarget,
  notice: Notice,
  opts: SendOptions = {},
): Promise<SendResult> {
  const { timeoutMs, attempts, backoffMs } = { ...DEFAULTS, ...opts };
  let error = "";
  for (let n = 1; n <= attempts; n++) {
    if (n > 1) await sleep(backoffMs(n));
    try {
      await sendOnce(target, notice, timeoutMs);
      return { ok: true, attempts: n };
    } catch (e) {
      error = (e as Error).message;
    }
  }
  return { ok: false, attempts, error };
}

async function sendOnce(target: NotifyTarget, notice: Notice, timeoutMs: number): Promise<void> {
  if (target.kind === "command") {
    const run = await runBounded(target.argv, {
      cwd: process.cwd(),
      env: {
        ...process.env,
        NOTIFY_EVENT: notice.event,
        NOTIFY_TITLE: notice.title,
        NOTIFY_TEXT: notice.text,
        NOTIFY_CHILD: notice.child,
        NOTIFY_JSON: JSON.stringify(notice),
      },
      timeoutMs,
      keepBytes: 1024,
    });
    if (run.exitCode !== 0)
      throw new Error(
        run.timedOut ? "timed out" : `exited ${run.exitCode ?? run.signal}: ${run.outputTail.trim()}`,
      );
    return;
  }
  const res =
    target.kind === "ntfy"
      ? await fetch(target.url, {
          method: "POST",
          body: notice.text || notice.title,
          headers: {
            // Header values are Latin-1: the title's other characters go as "?"; the body keeps them whole.
            Title: notice.title.replace(/[^\x20-\x7e]/g, "?"),
            Tags: notice.event === "failed" || notice.event === "paused" ? "warning" : "robot",
            Priority: notice.event === "waiting" || notice.event === "paused" ? "high" : "default",
          },
          signal: AbortSignal.timeout(timeoutMs),
        })
      : await fetch(target.url, {
          method: "POST",
          body: JSON.stringify(notice),
          headers: { "content-type": "application/json" },
          signal: AbortSignal.timeout(timeoutMs),
        });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}
