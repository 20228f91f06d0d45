#!/usr/bin/env node
// "A long conversation": `muster send` (queue a follow-up) and `muster send --wait` (its whole round trip) on a
// mock child whose conversation holds ~6 MB (60 turns of ~100 KB answers) against one just spawned, in
// alternating runs; the row is the ratio of the medians. Neither should grow with the conversation. Part of
// `npm run bench`; run alone: `node bench/long-conversation.mjs [runs]` (after a build).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { appendSession, sessionFileOf } from "../dist/sessions/store.js";
import { benchEnv } from "./env.mjs";
import { pct, round } from "./stats.mjs";

const BIN = path.join(import.meta.dirname, "..", "bin", "muster.js");
const TURNS = 60;
const ANSWER_BYTES = 100_000;

function run(args, env, cwd) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, cwd, encoding: "utf8" });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`muster ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout };
}

/** ~TURNS × ANSWER_BYTES of completed turns appended as the host writes them (the child is idle meanwhile). */
function grow(file) {
  const lines = [];
  for (let i = 0; i < TURNS; i++) {
    const turnId = `filler-${i}`;
    const ts = new Date().toISOString();
    lines.push(
      { type: "message", role: "user", text: `question ${i}`, ts, metadata: { turnId, source: "inbox" } },
      {
        type: "message",
        role: "assistant",
        text: `answer ${i} ${"z".repeat(ANSWER_BYTES)}`,
        ts,
        metadata: { turnId, status: "completed" },
      },
    );
  }
  appendSession(file, lines);
}

export function longConversation(given, base, runs) {
  const env = { ...given };
  delete env.NODE_EXTRA_CA_CERTS;
  const cwd = path.join(base, "long-conversation");
  fs.mkdirSync(cwd, { recursive: true });
  const spawned = () =>
    JSON.parse(run(["spawn", "--wait", "--json", "mock: reply=ok"], env, cwd).stdout).results[0];
  const long = spawned();
  const fresh = spawned();
  const file = sessionFileOf(long.artifactDir);
  grow(file);
  const bytes = fs.statSync(file).size;
  const times = { send: { long: [], fresh: [] }, followUp: { long: [], fresh: [] } };
  for (let i = 0; i < runs; i++) {
    for (const [which, c] of i % 2
      ? [
          ["long", long],
          ["fresh", fresh],
        ]
      : [
          ["fresh", fresh],
          ["long", long],
        ]) {
      times.followUp[which].push(run(["send", "--wait", c.id, "mock: reply=ok"], env, cwd).ms);
      times.send[which].push(run(["send", c.id, "mock: reply=ok"], env, cwd).ms);
      run(["wait", c.id], env, cwd);
    }
  }
  spawnSync(process.execPath, [BIN, "rm", "--force", long.id, fresh.id], { env, cwd, stdio: "ignore" });
  const out = { runs, conversationBytes: bytes };
  for (const [name, t] of Object.entries(times)) {
    const l = pct(t.long, 50);
    const f = pct(t.fresh, 50);
    out[name] = { longMs: round(l), freshMs: round(f), ratio: round(l / f, 2) };
  }
  return { ...out, target: { ratio: 1.2 } };
}

export const longConversationRow = (r) => [
  `a ${Math.round(r.conversationBytes / 1e6)} MB conversation ÷ a new one (median): send · send --wait`,
  `${r.send.ratio}× (${r.send.longMs} vs ${r.send.freshMs} ms) · ${r.followUp.ratio}× (${r.followUp.longMs} vs ${r.followUp.freshMs} ms)`,
  "≤ 1.2×",
];

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bench-longconv-"));
  const socket = `mbl-${process.pid}`;
  try {
    const r = longConversation(benchEnv(base, socket), base, Number(process.argv[2] ?? 11));
    const [name, result, target] = longConversationRow(r);
    console.log(`${name}  ${result}  (target: ${target})`);
    console.log(JSON.stringify(r));
  } finally {
    spawnSync("tmux", ["-L", socket, "kill-server"], { stdio: "ignore" });
    fs.rmSync(base, { recursive: true, force: true });
  }
}
