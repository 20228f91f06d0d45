/**
 * Waits, watching, until one named object of the API (a Pod, a SandboxClaim) is as the caller needs it: a
 * watch on its collection narrowed to its name, resumed from the last resourceVersion seen when the server
 * drops it, and a read after each drop (it may have got there meanwhile), up to a deadline.
 */
import { MusterError } from "../../base/errors.js";
import { apiSaid, type KubeConfig, k8s } from "./client.js";

export interface WatchedObject {
  metadata?: { resourceVersion?: string; [key: string]: unknown };
  [key: string]: unknown;
}

export interface WatchOne<T> {
  /** The collection's path (`/api/v1/namespaces/<ns>/pods`). */
  path: string;
  name: string;
  /** What the object is, in errors (`pod muster-x`). */
  what: string;
  deadline: number;
  /** The error's words at the deadline (`pod muster-x did not run within 180 s`). */
  late: string;
  /** An event's verdict: a value ends the wait, an Error fails it, undefined waits on. */
  judge: (type: string, obj: WatchedObject) => T | Error | undefined;
  /** After a drop: the verdict on the object as it is now (undefined: wait on). */
  reread: () => Promise<T | undefined>;
}

/** Resolves with the first verdict that ends the wait; throws its Error, or `unreachable` (`late`) at the deadline. */
export async function watchOne<T>(kc: KubeConfig, w: WatchOne<T>): Promise<T> {
  const { Watch } = await k8s();
  const watch = new Watch(kc);
  let resourceVersion: string | undefined;
  for (;;) {
    let abort: AbortController | undefined;
    let timer: NodeJS.Timeout | undefined;
    const outcome = await new Promise<{ done: T } | "dropped" | Error>((resolve) => {
      const seen = (type: string, obj: WatchedObject) => {
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        const v = w.judge(type, obj);
        if (v instanceof Error) resolve(v);
        else if (v !== undefined) resolve({ done: v });
      };
      watch
        .watch(
          w.path,
          { fieldSelector: `metadata.name=${w.name}`, ...(resourceVersion ? { resourceVersion } : {}) },
          seen,
          (err: unknown) =>
            resolve(err ? new MusterError("unreachable", `${w.what}: ${apiSaid(err)}`) : "dropped"),
        )
        .then((a) => {
          abort = a;
        })
        .catch((e: unknown) => resolve(new MusterError("unreachable", `${w.what}: ${apiSaid(e)}`)));
      timer = setTimeout(() => resolve("dropped"), Math.max(0, w.deadline - Date.now()));
      timer.unref();
    });
    clearTimeout(timer);
    // A settled wait ends its stream.
    abort?.abort();
    if (outcome instanceof Error) throw outcome;
    if (outcome !== "dropped") return outcome.done;
    if (Date.now() >= w.deadline) throw new MusterError("unreachable", w.late);
    // Dropped by the server (a timeout, a restart): it may have got there meanwhile.
    const now = await w.reread();
    if (now !== undefined) return now;
  }
}
