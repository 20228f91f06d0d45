#!/usr/bin/env node
// "cap overshoot": from the event that reached a cap (the mock's 3rd tool call under --max-tool-calls 3, and
// the moment --max-time 1s ran out) to the turn's completion record: how long a capped agent keeps going.
// Both ends are event timestamps written by the child host (ms resolution). Part of `npm run bench`.
import { childFiles } from "../dist/artifacts/layout.js";
import { readAllRecords } from "../dist/artifacts/reader.js";
import { pct, round } from "./stats.mjs";

async function one(m, caps, prompt) {
  const s = await m.spawn({ agent: "mock", prompt, caps });
  const out = await m.wait([s.id], { mode: "all", timeoutMs: 60_000 });
  if (out.results[0]?.status !== "exhausted") throw new Error(`not exhausted: ${out.results[0]?.status}`);
  const events = readAllRecords(childFiles(s.artifactDir).events);
  const at = (e) => Date.parse(e.ts);
  const done = at(events.find((e) => e.type === "completion"));
  if (caps.maxToolCalls) {
    const tools = events.filter((e) => e.type === "tool_activity" && e.phase === "start");
    return done - at(tools[caps.maxToolCalls - 1]);
  }
  return done - (at(events.find((e) => e.type === "turn_started")) + caps.maxTimeMs);
}

/** p50/p95 (ms) of cap reached → turn settled, for a count cap and a clock cap. */
export async function capOvershoot(muster, n) {
  const m = muster("caps");
  const tools = [];
  const time = [];
  for (let i = 0; i < n; i++) {
    tools.push(await one(m, { maxToolCalls: 3 }, "mock: sleep=20 tools=40"));
    time.push(await one(m, { maxTimeMs: 1000 }, "mock: hang"));
  }
  const p = (xs) => ({ p50: round(pct(xs, 50)), p95: round(pct(xs, 95)) });
  return { n, maxToolCalls: p(tools), maxTime: p(time), target: { p95: 100 } };
}

export const capRow = (r) => [
  "cap overshoot (cap reached → turn settled)",
  `tool calls p50 ${r.maxToolCalls.p50} ms, p95 ${r.maxToolCalls.p95} ms · time p50 ${r.maxTime.p50} ms, p95 ${r.maxTime.p95} ms`,
  "p95 ≤ 100 ms",
];
