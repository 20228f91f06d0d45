import type { MusterEvent, OutputRef } from "../artifacts/events.js";
import { ChildFeed } from "../artifacts/feed.js";
import type { MalformedLine } from "../artifacts/reader.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";
import { applyEvents, emptyState } from "./state.js";

// fs.watch is the fast path; this poll covers notifications that never come (as the watcher's).
const SAFETY_POLL_MS = 1000;
// While following, a host that died without a word is looked for this often (as the watcher does).
const LIVENESS_MS = 2000;

/** A child's events so far, in byte order (no symlink or FIFO followed; a record is at most 1 MiB). */
export function childEvents(c: LoadedChild, onMalformed?: (m: MalformedLine) => void): MusterEvent[] {
  return c.store.readEvents(onMalformed);
}

/**
 * A follow in progress: `done` settles "exited" once the child's host exits, "stopped" after stop(); it
 * rejects (MusterError "integrity") once the child's files can no longer be read (events.ndjson replaced).
 */
export interface Following {
  done: Promise<"exited" | "stopped">;
  stop(): void;
}

/**
 * Hands on a child's events from the first, then each new one as it is appended (fs.watch hint + byte
 * cursor + a slow safety poll), until its host exits. A host that dies without a word is probed every 2 s
 * and settled `lost` (reconcile), so a follow never outlives its child.
 */
export function followChild(
  m: Pick<CoreContext, "reconcile" | "reload">,
  c: LoadedChild,
  onEvent: (e: MusterEvent) => void,
  onMalformed?: (m: MalformedLine) => void,
): Following {
  const state = emptyState();
  let finish: (how: "exited" | "stopped") => void = () => {};
  let fail: (e: unknown) => void = () => {};
  let timer: NodeJS.Timeout | undefined;
  let over = false;
  const feed = new ChildFeed({ pollMs: SAFETY_POLL_MS });
  const tail = feed.subscribe(
    c.store,
    (events) => {
      for (const e of events) onEvent(e);
      applyEvents(state, events);
      if (state.exited) finish("exited");
    },
    { onError: (e) => fail(e), ...(onMalformed ? { onMalformed } : {}) },
  );
  const done = new Promise<"exited" | "stopped">((resolve, reject) => {
    const end = (): boolean => {
      if (over) return false;
      over = true;
      feed.close();
      if (timer) clearTimeout(timer);
      return true;
    };
    finish = (how) => {
      if (end()) resolve(how);
    };
    fail = (e) => {
      if (end()) reject(e);
    };
  });
  const probe = (): void => {
    timer = setTimeout(() => {
      // reconcile writes `lost` for a host proven dead; the tail then reads it and the follow ends.
      let now: LoadedChild;
      try {
        now = m.reload(c.entry);
      } catch (e) {
        // Its files are refused now (a symlink, FIFO or device in place of events.ndjson, or it is gone):
        // the follow ends with that one line, never a throw out of a timer.
        fail(e);
        return;
      }
      void m
        .reconcile(now)
        .catch(() => undefined)
        .finally(() => {
          tail.pump();
          if (!over) probe();
        });
    }, LIVENESS_MS);
  };
  tail.pump();
  if (!over) probe();
  return { done, stop: () => finish("stopped") };
}

/** The first `maxBytes` of a turn's answer snapshot, for a preview (no symlink or FIFO followed, never more read). */
export function answerHead(c: LoadedChild, ref: OutputRef, maxBytes: number): Buffer {
  return c.store.readSnapshotHead(ref, maxBytes);
}

/** One child's event log, as `muster logs` reads it. */
export interface ChildLog {
  /** The child's full id. */
  id: string;
  /** Its events so far (see childEvents). */
  events(onMalformed?: (m: MalformedLine) => void): MusterEvent[];
  /** Its events from the first, then each new one until its host exits (see followChild). */
  follow(onEvent: (e: MusterEvent) => void, onMalformed?: (m: MalformedLine) => void): Following;
  /** The first `maxBytes` of a turn's answer snapshot (see answerHead). */
  answerHead(ref: OutputRef, maxBytes: number): Buffer;
}

/** A loaded child's log. */
export function childLog(m: Pick<CoreContext, "reconcile" | "reload">, c: LoadedChild): ChildLog {
  return {
    id: c.entry.id,
    events: (onMalformed) => childEvents(c, onMalformed),
    follow: (onEvent, onMalformed) => followChild(m, c, onEvent, onMalformed),
    answerHead: (ref, maxBytes) => answerHead(c, ref, maxBytes),
  };
}
