/**
 * The ctx helpers that only combine ctx.agent calls (await, parallel, pipeline): plain promise plumbing with no
 * access to the run, so the trusted engine uses them as they are. The QuickJS prelude (sandbox-prelude.ts)
 * has its own copy in JS with the same meaning, since no host function may run inside the sandbox.
 */
import { MusterError } from "../../base/errors.js";

interface Awaitable<R> {
  await(): Promise<R>;
}

/** "all": every result, in the handles' order; "first": the first to settle and the handles still open. */
export async function awaitHandles<R, H extends Awaitable<R>>(
  handles: H[],
  mode: "all" | "first" = "all",
): Promise<R[] | { result: R; rest: H[] }> {
  if (mode === "all") return Promise.all(handles.map((h) => h.await()));
  if (handles.length === 0)
    throw new MusterError("invalid_argument", 'ctx.await(handles, "first") needs at least one handle');
  const first = await Promise.race(handles.map((h, i) => h.await().then((result) => ({ result, i }))));
  return { result: first.result, rest: handles.filter((_, i) => i !== first.i) };
}

/** Runs fn over items, at most `limit` at a time (default: all); results in item order. */
export async function parallel<T, R>(
  items: T[],
  fn: (item: T, index: number) => Promise<R> | R,
  opts: { limit?: number } = {},
): Promise<R[]> {
  const limit = Math.max(1, opts.limit ?? items.length);
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

/** A stage of ctx.pipeline: gets the previous stage's value (the item, for the first) and the item's index. */
// biome-ignore lint/suspicious/noExplicitAny: a stage's value is whatever the stage before it returned
export type Stage = (value: any, index: number) => unknown;

/**
 * Streams every item through the stages: an item moves to its next stage as soon as its current one is done,
 * whatever the other items are doing (stage 2 of item 1 may start before stage 1 of item 5 ends). A stage
 * that returns a ctx.agent handle passes on its settled result, so a failed child flows on as a value for the
 * next stage to look at. Results in item order.
 */
export async function pipeline(items: unknown[], stages: Stage[]): Promise<unknown[]> {
  if (!Array.isArray(items))
    throw new MusterError("invalid_argument", "ctx.pipeline needs an array of items");
  for (const s of stages)
    if (typeof s !== "function")
      throw new MusterError("invalid_argument", "ctx.pipeline: every stage must be a function");
  return Promise.all(
    items.map(async (item, i) => {
      let v: unknown = item;
      for (const stage of stages) v = await settled(await stage(v, i));
      return v;
    }),
  );
}

/** A ctx.agent handle's result, or the value itself. */
function settled(v: unknown): unknown {
  const h = v as Partial<Awaitable<unknown>> | null;
  return h && typeof h === "object" && typeof h.await === "function" && "id" in h ? h.await() : v;
}
