// spawn() call → turn_started as the parent reads it, one child at a time (each waits for its completion,
// so one child's runner start-up never overlaps the next spawn).
import { ChildFeed } from "../dist/artifacts/feed.js";
import { localChildStore } from "../dist/artifacts/store-local.js";

export async function spawnLatency(m, n, spawnOpts = {}) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const s = await m.spawn({ agent: "mock", prompt: "mock: reply=ok", ...spawnOpts });
    const t = await new Promise((resolve) => {
      let seen;
      const feed = new ChildFeed({ pollMs: 1000 });
      feed
        .subscribe(localChildStore(s.artifactDir), (events) => {
          for (const e of events) {
            if (e.type === "turn_started") seen ??= performance.now() - t0;
            if (e.type === "completion") {
              feed.close();
              resolve(seen);
            }
          }
        })
        .pump();
    });
    samples.push(t);
  }
  return samples;
}
