// Shared by the start-stall stress scripts: busy loops on the cores, and a watch over a
// state root that times every child's pane → child_started and dumps any host not started after 3 s, with
// the state, wait channel and kernel stack of its processes, the tmux server's and the MCP server's.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** `n` busy-loop processes; kill them with `.forEach((p) => p.kill("SIGKILL"))`. */
export const busyLoad = (n) =>
  Array.from({ length: n }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));

/** One process as `pid state wchan cmdline`, with the top of its kernel stack where readable. */
function describe(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    const wchan = fs.readFileSync(`/proc/${pid}/wchan`, "utf8");
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").slice(0, 140);
    let stack = "";
    try {
      stack = fs.readFileSync(`/proc/${pid}/stack`, "utf8").split("\n").slice(0, 6).join(" | ");
    } catch {}
    return `pid ${pid} ${state} ${wchan} ${cmd}${stack ? `\n      ${stack}` : ""}`;
  } catch {
    return `pid ${pid} gone`;
  }
}

const pidsMatching = (needle) =>
  fs
    .readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);

const records = (file) => {
  let text = "";
  try {
    text = fs.readFileSync(file, "utf8");
  } catch {}
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    });
};

/**
 * Watches every child under `musterHome` (polling every 250 ms): `seen` maps child id → {created, started,
 * done, status}; a child without child_started 3 s after it was created is dumped once. `stop()` scans a
 * last time; `startMs()` gives the sorted pane → child_started times.
 */
export function watchHostStarts(musterHome, socket) {
  const root = path.join(musterHome, "primaries");
  const seen = new Map();
  const dumped = new Set();
  const scan = () => {
    if (!fs.existsSync(root)) return;
    for (const p of fs.readdirSync(root)) {
      const dir = path.join(root, p, "artifacts");
      if (!fs.existsSync(dir)) continue;
      for (const id of fs.readdirSync(dir)) {
        let meta;
        try {
          meta = JSON.parse(fs.readFileSync(path.join(dir, id, "meta.json"), "utf8"));
        } catch {
          continue;
        }
        const events = records(path.join(dir, id, "events.ndjson"));
        const started = events.find((e) => e.type === "child_started");
        const done = events.find((e) => e.type === "completion");
        const s = {
          created: Date.parse(meta.createdAt),
          started: started && Date.parse(started.ts),
          done: done && Date.parse(done.ts),
          status: done?.status,
        };
        seen.set(id, s);
        if (s.started || Date.now() - s.created <= 3000 || dumped.has(id)) continue;
        dumped.add(id);
        console.log(`\nSLOW START ${id} (${Date.now() - s.created} ms):`);
        for (const pid of pidsMatching(id)) console.log(`  host: ${describe(pid)}`);
        for (const pid of pidsMatching(socket)) console.log(`  tmux: ${describe(pid)}`);
        for (const pid of pidsMatching("muster.js mcp")) console.log(`  mcp: ${describe(pid)}`);
      }
    }
  };
  const timer = setInterval(scan, 250);
  return {
    seen,
    stop() {
      clearInterval(timer);
      scan();
    },
    startMs: () =>
      [...seen.values()]
        .filter((s) => s.started)
        .map((s) => s.started - s.created)
        .sort((a, b) => a - b),
  };
}
