/**
 * The `ctx` a sandboxed program sees, written in JS and evaluated inside QuickJS before the program. It is an
 * expression: a function of the host's natives (start, await, log, phase), which pass strings only (JSON), and
 * it returns `{ctx, out}` — `out` turns the program's result into JSON with the JSON captured here, before the
 * program could replace it. The host checks everything that crosses back; nothing here is trusted.
 */
export const PRELUDE = `(function (startNative, awaitNative, logNative, phaseNative) {
  "use strict";
  const stringify = JSON.stringify, parse = JSON.parse, isArray = Array.isArray;
  function handle(id) {
    let p;
    return Object.freeze({
      id,
      await() { return p || (p = awaitNative(id).then((s) => parse(s))); },
    });
  }
  async function awaitAll(handles, mode) {
    if (!isArray(handles)) throw new TypeError("ctx.await needs an array of handles");
    if (mode === undefined || mode === "all") return Promise.all(handles.map((h) => h.await()));
    if (mode !== "first") throw new TypeError('ctx.await mode is "all" or "first"');
    if (handles.length === 0) throw new TypeError('ctx.await(handles, "first") needs at least one handle');
    const first = await Promise.race(handles.map((h, i) => h.await().then((result) => ({ result, i }))));
    return { result: first.result, rest: handles.filter((_, j) => j !== first.i) };
  }
  async function parallel(items, fn, opts) {
    if (!isArray(items)) throw new TypeError("ctx.parallel needs an array of items");
    if (typeof fn !== "function") throw new TypeError("ctx.parallel needs a function");
    const limit = Math.max(1, Math.floor(Number((opts && opts.limit) || items.length)) || 1);
    const out = new Array(items.length);
    let next = 0;
    async function lane() {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }
    const lanes = [];
    for (let k = 0; k < Math.min(limit, items.length); k++) lanes.push(lane());
    await Promise.all(lanes);
    return out;
  }
  // As ctx-flow.ts's pipeline: each item moves on to its next stage as soon as its own current one is done.
  function settled(v) {
    return v && typeof v === "object" && typeof v.await === "function" && "id" in v ? v.await() : v;
  }
  async function pipeline(items, ...stages) {
    if (!isArray(items)) throw new TypeError("ctx.pipeline needs an array of items");
    for (const s of stages) if (typeof s !== "function") throw new TypeError("ctx.pipeline: every stage must be a function");
    return Promise.all(items.map(async (item, i) => {
      let v = item;
      for (const stage of stages) v = await settled(await stage(v, i));
      return v;
    }));
  }
  const ctx = Object.freeze({
    agent(call) { return handle(startNative(stringify(call === undefined ? null : call))); },
    await: awaitAll,
    parallel,
    pipeline,
    phase(name) { phaseNative(String(name)); },
    log(text) { logNative(String(text)); },
  });
  function out(v) {
    const s = stringify(v);
    return s === undefined ? "null" : s;
  }
  return { ctx, out };
})`;
